import { type RawBuilder, sql } from 'kysely'
import './types.js'

/**
 * The time of the live sandbox clock `clockId` (an expression of the caller's statement), or null (no clock, or a
 * deleted one): what `onClock` reads, for a statement that stamps many objects at once, each on its own clock.
 */
export function clockTimeSql(clockId: RawBuilder<unknown>): RawBuilder<Date | null> {
  return sql`(SELECT k.frozen_time FROM sandbox_clocks AS k WHERE k.id = ${clockId} AND k.deleted_at IS NULL)`
}
