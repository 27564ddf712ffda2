/**
 * Migration 0087 moves each stored report CSV into one part. Migrating a whole empty database up to the migration before it takes
 * many seconds, so the test takes a migrated one, puts the reports table back as it was before (a `content`
 * column, no parts) and runs 0087's `up` on it, on PGlite or on PostgreSQL.
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { openDatabase, type DbHandle } from '../../src/db/client.js'
import { runStatements } from '../../src/db/migrate.js'
import { up } from '../../src/db/migrations/0087_report_parts.js'
import { freshDatabaseUrl, migratedPgliteImage } from '../helpers/db.js'

let handle: DbHandle
let drop = async (): Promise<void> => {}

before(async () => {
  const database = await freshDatabaseUrl()
  drop = database.drop
  handle = await openDatabase({
    databaseUrl: database.url,
    dataDir: null,
    poolSize: 2,
    pgliteImage: database.url ? undefined : await migratedPgliteImage(),
  })
  await runStatements(handle.db, [
    'DROP TABLE report_parts',
    'ALTER TABLE reports DROP COLUMN parts_generation',
    'ALTER TABLE reports ADD COLUMN content text',
    'ALTER TABLE reports ALTER COLUMN size_bytes TYPE integer',
  ])
})
after(async () => {
  await handle.close()
  await drop()
})

test('a report stored as one text column becomes part 0 of generation g0, which parts_generation names', async () => {
  const db = handle.db
  await sql`INSERT INTO organizations (id, name) VALUES ('org_m', 'M')`.execute(db)
  const csv = 'id,amount\nle_1,"1,5"\n'
  for (const [id, status, content] of [
    ['rpt_done', 'succeeded', csv],
    ['rpt_pending', 'pending', null],
  ] as const) {
    await sql`INSERT INTO reports (id, organization_id, environment, type, status, window_from, window_to, row_count, size_bytes, content, created_at, updated_at)
      VALUES (${id}, 'org_m', 'sandbox', 'ledger', ${status}, now(), now(), 1, ${content === null ? null : content.length}, ${content}, now(), now())`.execute(
      db,
    )
  }

  await up(db)
  const { rows: parts } = await sql<{
    report_id: string
    generation: string
    seq: number
    content: string
  }>`
    SELECT report_id, generation, seq, content FROM report_parts ORDER BY report_id`.execute(db)
  assert.deepEqual(parts, [{ report_id: 'rpt_done', generation: 'g0', seq: 0, content: csv }])
  const { rows: reports } = await sql<{ id: string; parts_generation: string | null }>`
    SELECT id, parts_generation FROM reports ORDER BY id`.execute(db)
  assert.deepEqual(reports, [
    { id: 'rpt_done', parts_generation: 'g0' },
    { id: 'rpt_pending', parts_generation: null },
  ])
  const { rows: columns } = await sql<{ column_name: string; data_type: string }>`
    SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'reports' AND column_name IN ('content', 'size_bytes')`.execute(
    db,
  )
  assert.deepEqual(
    columns,
    [{ column_name: 'size_bytes', data_type: 'bigint' }],
    'content is gone; size_bytes holds files past 2 GiB',
  )
  await sql`DELETE FROM reports WHERE id = 'rpt_done'`.execute(db)
  assert.equal(
    (await sql`SELECT 1 FROM report_parts`.execute(db)).rows.length,
    0,
    'parts go with their report',
  )
})
