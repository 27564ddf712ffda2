import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import type { OrderRow } from './orders-repo.js'
import './types.js'

/** An eSIM's auto top-up settings as `PATCH` writes them (all null: off). */
export interface AutoTopUpSettings {
  top_up_id: string
  account_id: string
  trigger: 'depleted' | 'threshold'
  threshold_pct: number | null
  max_per_month: number
}

/** Replaces the eSIM's settings (null: off); the month's count stays, so turning it off and on never resets the cap. */
export async function setAutoTopUp(
  trx: Db,
  esimId: string,
  settings: AutoTopUpSettings | null,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('esims')
    .set({
      auto_top_up_id: settings?.top_up_id ?? null,
      auto_top_up_account_id: settings?.account_id ?? null,
      auto_top_up_trigger: settings?.trigger ?? null,
      auto_top_up_threshold_pct: settings?.threshold_pct ?? null,
      auto_top_up_max_per_month: settings?.max_per_month ?? null,
      updated_at: now,
    })
    .where('id', '=', esimId)
    .execute()
}

/** A report that moved usage on a package with a volume: what the crossing claim judges. */
export interface UsageMove {
  esim_id: string
  bundle_order_id: string
  data_mb: number
  before: number
  after: number
}

export interface ClaimedCrossing {
  esim_id: string
  crossing_order_id: string
  organization_id: string
  environment: string
}

/**
 * Claims, in one conditional statement, the crossings these reports make of their eSIMs' auto top-up triggers
 * (depleted: the package used up; threshold: usage goes from below `threshold_pct` of the package to at least it).
 * A package's marker is set once (`auto_top_up_claimed_at IS NULL` in the WHERE): under the eSIM's row lock, and
 * whatever else races, one crossing is claimed by exactly one report. Answers the crossings claimed now.
 */
export async function claimCrossings(
  trx: Db,
  moves: readonly UsageMove[],
  now: Date,
): Promise<ClaimedCrossing[]> {
  if (moves.length === 0) return []
  const { rows } = await sql<ClaimedCrossing>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${JSON.stringify(moves)}::json)
        AS i(esim_id text, bundle_order_id text, data_mb bigint, before bigint, after bigint)
    )
    UPDATE esim_bundles AS b SET auto_top_up_claimed_at = ${now}
    FROM input AS i JOIN esims AS e ON e.id = i.esim_id AND e.id = ANY (ARRAY(SELECT esim_id FROM input))
    WHERE b.order_id = i.bundle_order_id AND b.order_id = ANY (ARRAY(SELECT bundle_order_id FROM input))
      AND b.esim_id = e.id AND b.auto_top_up_claimed_at IS NULL
      AND e.auto_top_up_id IS NOT NULL AND e.status NOT IN ('suspended', 'canceled')
      AND CASE WHEN e.auto_top_up_trigger = 'depleted' THEN i.before < i.data_mb AND i.after >= i.data_mb
        ELSE i.before * 100 < e.auto_top_up_threshold_pct * i.data_mb
          AND i.after * 100 >= e.auto_top_up_threshold_pct * i.data_mb END
    RETURNING e.id AS esim_id, b.order_id AS crossing_order_id, e.organization_id, e.environment`.execute(
    trx,
  )
  return rows
}

/** The eSIM a crossing happened on (through the package that crossed). */
export async function esimOfCrossing(db: Db, crossingOrderId: string): Promise<string | null> {
  const row = await db
    .selectFrom('esim_bundles')
    .select('esim_id')
    .where('order_id', '=', crossingOrderId)
    .executeTakeFirst()
  return row?.esim_id ?? null
}

/** Why a crossing's top-up bought nothing, if it was refused (null: not refused). */
export async function failureOfCrossing(db: Db, crossingOrderId: string): Promise<string | null> {
  const row = await db
    .selectFrom('esim_bundles')
    .select('auto_top_up_failure')
    .where('order_id', '=', crossingOrderId)
    .executeTakeFirst()
  return row?.auto_top_up_failure ?? null
}

/** Records why a crossing's top-up bought nothing: the crossing is done (a job run again does not retry it). */
export async function recordFailure(
  trx: Db,
  crossingOrderId: string,
  reason: string,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('esim_bundles')
    .set({ auto_top_up_failure: reason, updated_at: now })
    .where('order_id', '=', crossingOrderId)
    .execute()
}

/** The auto top-up a crossing started, if one was written. */
export async function orderOfCrossing(
  db: Db,
  crossingOrderId: string,
): Promise<OrderRow | undefined> {
  return db
    .selectFrom('esim_orders')
    .selectAll()
    .where('crossing_order_id', '=', crossingOrderId)
    .executeTakeFirst()
}

/** Counts one more run in `month` (a new month starts from 1); under the eSIM's row lock. */
export async function countRun(trx: Db, esimId: string, month: string, now: Date): Promise<void> {
  await sql`UPDATE esims SET auto_top_up_runs = CASE WHEN auto_top_up_month = ${month} THEN auto_top_up_runs + 1 ELSE 1 END,
    auto_top_up_month = ${month}, updated_at = ${now} WHERE id = ${esimId}`.execute(trx)
}

/** A run that failed (refunded) gives its place back, when it was counted in the month still counted. */
export async function uncountRun(trx: Db, esimId: string, month: string, now: Date): Promise<void> {
  await sql`UPDATE esims SET auto_top_up_runs = GREATEST(0, auto_top_up_runs - 1), updated_at = ${now}
    WHERE id = ${esimId} AND auto_top_up_month = ${month}`.execute(trx)
}

/** The latest end of the validity of a package's entries on the eSIM (an add-on of 0 days ends with it). */
export async function packageEnds(
  trx: Db,
  esimId: string,
  packageId: string,
): Promise<{ any: boolean; expires_at: Date | null }> {
  const rows = await trx
    .selectFrom('esim_bundles')
    .select(['expires_at', 'status'])
    .where('esim_id', '=', esimId)
    .where('package_id', '=', packageId)
    .where('status', '!=', 'canceled')
    .execute()
  const ends = rows.map((r) => r.expires_at).filter((d): d is Date => d !== null)
  return {
    any: rows.length > 0,
    expires_at: ends.length ? new Date(Math.max(...ends.map((d) => d.getTime()))) : null,
  }
}
