import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * A report's CSV is kept as numbered parts of about 1 MiB (`report_parts`) instead of one text column, so
 * generating and downloading a report of millions of rows holds one part in memory, not the whole file. Each
 * generation run writes its parts under a generation id of its own; `reports.parts_generation` names the one
 * the download reads (set when the report succeeds, in the transaction that removes every other generation).
 * Existing files become one part of generation `g0`. `size_bytes` becomes bigint: ten million rows exceed 2 GiB.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE report_parts (
      report_id text NOT NULL REFERENCES reports(id) ON DELETE CASCADE,
      generation text NOT NULL,
      seq integer NOT NULL,
      content text NOT NULL,
      PRIMARY KEY (report_id, generation, seq)
    )`,
    `ALTER TABLE reports ADD COLUMN parts_generation text`,
    `INSERT INTO report_parts (report_id, generation, seq, content) SELECT id, 'g0', 0, content FROM reports WHERE content IS NOT NULL`,
    `UPDATE reports SET parts_generation = 'g0' WHERE content IS NOT NULL`,
    `ALTER TABLE reports DROP COLUMN content`,
    `ALTER TABLE reports ALTER COLUMN size_bytes TYPE bigint`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
