import { type RawBuilder, sql } from 'kysely'
import type { Db } from '../../db/types.js'
import './types.js'

/** The ids of the cardholders on sandbox clock `clockId` (docs/sandbox-clocks.md), up to `limit`. */
export async function cardholdersOnClock(
  db: Db,
  clockId: string,
  limit?: number,
): Promise<string[]> {
  let q = db.selectFrom('cardholders').select('id').where('clock_id', '=', clockId).orderBy('id')
  if (limit !== undefined) q = q.limit(limit)
  const rows = await q.execute()
  return rows.map((r) => r.id)
}

/**
 * Deletes these cardholders of sandbox clock `clockId` (the clock is deleted, and every module has deleted what
 * was under them: docs/sandbox-clocks.md, "Deleting"); answers how many.
 */
export async function deleteCardholdersOnClock(
  db: Db,
  clockId: string,
  ids: readonly string[],
): Promise<number> {
  if (ids.length === 0) return 0
  const r = await db
    .deleteFrom('cardholders')
    .where('clock_id', '=', clockId)
    .where('id', 'in', [...ids])
    .executeTakeFirst()
  return Number(r.numDeletedRows)
}

/** The sandbox clock of the cardholder `cardholderId` (an expression of the caller's statement), or null. */
export function clockOfCardholderSql(cardholderId: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql`(SELECT h.clock_id FROM cardholders AS h WHERE h.id = ${cardholderId})`
}
