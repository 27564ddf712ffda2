/**
 * The request's unit of work (src/db/unit-of-work.ts), as the value routes hand their use cases: when it
 * begins, what commits with it, what commits on its own. Runs on both databases.
 */
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import { sql } from 'kysely'
import { withTx } from '../../src/db/tx.js'
import type { Db } from '../../src/db/types.js'
import { openUnit } from '../../src/db/unit-of-work.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let root: Db
const onPostgres = !!process.env.DATABASE_URL

const put = (db: Db, id: string) => sql`INSERT INTO unit_probe (id) VALUES (${id})`.execute(db)

async function ids(): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`SELECT id FROM unit_probe ORDER BY id`.execute(root)
  return rows.map((r) => r.id)
}

before(async () => {
  t = await startTestApp()
  root = t.deps.db
  await sql`CREATE TABLE unit_probe (id text PRIMARY KEY)`.execute(root)
})
after(() => t.close())
beforeEach(() => sql`DELETE FROM unit_probe`.execute(root))

describe('a unit of work', () => {
  test('before its first withTx, a statement through its handle commits on its own', async () => {
    const unit = openUnit(root)
    await put(unit.db, 'a')
    assert.equal(unit.begun, false)
    await unit.rollback()
    assert.deepEqual(await ids(), ['a'])
  })

  test('from its first withTx on, everything sent through its handle commits with it, or not at all', async () => {
    const kept = openUnit(root)
    await withTx(kept.db, (trx) => put(trx, 'a'))
    assert.equal(kept.begun, true)
    await put(kept.db, 'b')
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM unit_probe`.execute(
      kept.db,
    )
    assert.equal(rows[0].n, 2, 'the unit reads its own writes')
    await kept.commit((db) => put(db, 'c'))
    assert.deepEqual(await ids(), ['a', 'b', 'c'])

    const dropped = openUnit(root)
    await withTx(dropped.db, (trx) => put(trx, 'd'))
    await put(dropped.db, 'e')
    await dropped.rollback()
    assert.deepEqual(await ids(), ['a', 'b', 'c'])
  })

  test('a withTx that fails inside the unit rolls back its own part only', async () => {
    const unit = openUnit(root)
    await withTx(unit.db, (trx) => put(trx, 'a'))
    await assert.rejects(
      withTx(unit.db, async (trx) => {
        await put(trx, 'b')
        await put(trx, 'a') // the primary key refuses it
      }),
      { code: '23505' },
    )
    await unit.commit((db) => put(db, 'c'))
    assert.deepEqual(await ids(), ['a', 'c'])
  })

  test('a unit that never began commits its last write alone', async () => {
    const unit = openUnit(root)
    await unit.commit((db) => put(db, 'answer'))
    assert.equal(unit.begun, false)
    assert.deepEqual(await ids(), ['answer'])
  })

  test('a failed last write rolls the whole unit back', async () => {
    await put(root, 'taken')
    const unit = openUnit(root)
    await withTx(unit.db, (trx) => put(trx, 'effect'))
    await assert.rejects(
      unit.commit((db) => put(db, 'taken')),
      { code: '23505' },
    )
    assert.deepEqual(await ids(), ['taken'])
  })

  test('its autonomous handle is not rolled back with it on PostgreSQL, and never breaks it', async () => {
    const unit = openUnit(root)
    await withTx(unit.db, (trx) => put(trx, 'effect'))
    await put(unit.autonomous, 'intent')
    // A refused autonomous statement (the simulators expect some) leaves the unit usable.
    await assert.rejects(put(unit.autonomous, 'intent'), { code: '23505' })
    await put(unit.db, 'more')
    await unit.rollback()
    // The embedded database has one connection: the intent could only run inside the unit, and went with it.
    assert.deepEqual(await ids(), onPostgres ? ['intent'] : [])
  })

  test('on PostgreSQL its writes are invisible to others until it commits', {
    skip: !onPostgres,
  }, async () => {
    const unit = openUnit(root)
    await withTx(unit.db, (trx) => put(trx, 'pending'))
    assert.deepEqual(await ids(), [])
    await unit.commit()
    assert.deepEqual(await ids(), ['pending'])
  })
})
