import { type RawBuilder, sql } from 'kysely'
import type { Db } from '../../db/types.js'
import './types.js'

/** The ids of the cardholders on sandbox clock `clockId` (docs/sandbox-clocks.md). */
export async function cardholdersOnClock(db: Db, clockId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('cardholders')
    .select('id')
    .where('clock_id', '=', clockId)
    .execute()
  return rows.map((r) => r.id)
}

/** The cardholders on the clock go back to wall time (the clock is deleted); answers how many. */
export async function detachFromClock(trx: Db, clockId: string, now: Date): Promise<number> {
  const r = await trx
    .updateTable('cardholders')
    .set({ clock_id: null, updated_at: now })
    .where('clock_id', '=', clockId)
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}

/** The sandbox clock of the cardholder `cardholderId` (an expression of the caller's statement), or null. */
export function clockOfCardholderSql(cardholderId: RawBuilder<unknown>): RawBuilder<string | null> {
  return sql`(SELECT h.clock_id FROM cardholders AS h WHERE h.id = ${cardholderId})`
}
