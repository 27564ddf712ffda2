import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import { followTravelEsim } from '../cards/index.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import type { EsimBundlesTable, EsimsTable } from './types.js'
import './types.js'

/** An eSIM; `clock_id` (read by `findEsim` and the locks): the sandbox clock of its cardholder, null when none. */
export type EsimRow = Selectable<EsimsTable> & { clock_id?: string | null }

/** The sandbox clock of the eSIM's cardholder (docs/sandbox-clocks.md), as a column of the statement that reads it. */
export const esimClockColumn = () =>
  clockOfCardholderSql(sql.ref('esims.cardholder_id')).as('clock_id')
/** A package on an eSIM; a top-up is a package of its own on the eSIM it was bought for (`top_up_id` set). */
export type BundleRow = Selectable<EsimBundlesTable> & {
  package_name: string
  top_up_id: string | null
  top_up_name: string | null
}

export async function findEsim(db: Db, id: string): Promise<EsimRow | undefined> {
  return db
    .selectFrom('esims')
    .selectAll()
    .select(esimClockColumn())
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function lockEsim(trx: Db, id: string): Promise<EsimRow | undefined> {
  return trx
    .selectFrom('esims')
    .selectAll()
    .select(esimClockColumn())
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

/** The eSIM read under a share lock: its changes (which lock it for update) wait until the caller commits. */
export async function findEsimShared(db: Db, id: string): Promise<EsimRow | undefined> {
  return db
    .selectFrom('esims')
    .selectAll()
    .select(esimClockColumn())
    .where('id', '=', id)
    .forShare()
    .executeTakeFirst()
}

export async function listEsims(
  db: Db,
  organizationId: string,
  environment: string,
  cardholderId: string | undefined,
  bounds: PageBounds,
): Promise<EsimRow[]> {
  let q = db
    .selectFrom('esims')
    .selectAll()
    .select(esimClockColumn())
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
  if (cardholderId !== undefined) q = q.where('cardholder_id', '=', cardholderId)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** The packages on these eSIMs, oldest first on each (a top-up is found through the order that bought it). */
export async function bundlesOf(db: Db, esimIds: string[]): Promise<BundleRow[]> {
  if (esimIds.length === 0) return []
  return db
    .selectFrom('esim_bundles as b')
    .innerJoin('esim_packages as p', 'p.id', 'b.package_id')
    .innerJoin('esim_orders as o', 'o.id', 'b.order_id')
    .leftJoin('esim_top_ups as t', 't.id', 'o.top_up_id')
    .selectAll('b')
    .select(['p.name as package_name', 'o.top_up_id', 't.name as top_up_name'])
    .where('b.esim_id', 'in', esimIds)
    .orderBy('b.created_at')
    .orderBy('b.order_id')
    .execute()
}

export async function insertBundle(trx: Db, row: Selectable<EsimBundlesTable>): Promise<void> {
  await trx.insertInto('esim_bundles').values(row).execute()
}

export type BundleChanges = Partial<
  Pick<BundleRow, 'status' | 'data_mb' | 'data_used_mb' | 'expires_at'>
>

export async function updateBundle(
  trx: Db,
  orderId: string,
  changes: BundleChanges,
  now: Date,
): Promise<void> {
  await trx
    .updateTable('esim_bundles')
    .set({ ...changes, updated_at: now })
    .where('order_id', '=', orderId)
    .execute()
}

export async function setEsimStatus(trx: Db, id: string, status: string, now: Date): Promise<void> {
  await trx.updateTable('esims').set({ status, updated_at: now }).where('id', '=', id).execute()
}

export async function touchEsim(trx: Db, id: string, now: Date): Promise<void> {
  await trx.updateTable('esims').set({ updated_at: now }).where('id', '=', id).execute()
}

/** What travel mode copies of an eSIM onto the cards that follow it (docs/cards.md, "Travel mode"). */
type TravelSource = Pick<EsimRow, 'id' | 'country' | 'status' | 'valid_until'>
const TRAVEL_SOURCE = sql`id, country, status, valid_until`

/** Its country, and until when its bundle is valid: never while suspended or canceled. */
export function travelFacts(esim: TravelSource): {
  id: string
  country: string | null
  valid_until: Date | null
} {
  const barred = esim.status === 'suspended' || esim.status === 'canceled'
  return {
    id: esim.id,
    country: esim.country,
    valid_until: barred || esim.valid_until === null ? null : new Date(esim.valid_until),
  }
}

/** The cards in travel mode on the eSIMs just changed follow them, in the same transaction. */
async function followedBy(trx: Db, changed: readonly TravelSource[]): Promise<void> {
  for (const esim of changed) await followTravelEsim(trx, travelFacts(esim))
}

/**
 * A package added to the eSIM may end later than its validity did: `valid_until` moves to the later end, and the
 * validity warnings start again for it.
 */
export async function extendValidity(
  trx: Db,
  id: string,
  until: Date | null,
  now: Date,
): Promise<void> {
  if (until === null) return
  const { rows } =
    await sql<TravelSource>`UPDATE esims SET valid_until = ${until}, validity_warned_hours = '{}', updated_at = ${now}
    WHERE id = ${id} AND (valid_until IS NULL OR valid_until < ${until}) RETURNING ${TRAVEL_SOURCE}`.execute(
      trx,
    )
  await followedBy(trx, rows)
}

/** The profile is on a device: `released` becomes `installed` (a later status stays). */
export async function setInstalled(trx: Db, id: string, now: Date): Promise<void> {
  await sql`UPDATE esims SET installed_at = ${now}, status = CASE WHEN status = 'released' THEN 'installed' ELSE status END,
    updated_at = ${now} WHERE id = ${id}`.execute(trx)
}

export async function setCountry(trx: Db, id: string, country: string, now: Date): Promise<void> {
  const { rows } =
    await sql<TravelSource>`UPDATE esims SET country = ${country}, updated_at = ${now}
    WHERE id = ${id} RETURNING ${TRAVEL_SOURCE}`.execute(trx)
  await followedBy(trx, rows)
}

/** A canceled eSIM: its packages are canceled too, and its validity ends now (nothing is announced of it). */
export async function setCanceled(trx: Db, id: string, now: Date): Promise<void> {
  await sql`UPDATE esim_bundles SET status = 'canceled', updated_at = ${now} WHERE esim_id = ${id}`.execute(
    trx,
  )
  const { rows } =
    await sql<TravelSource>`UPDATE esims SET status = 'canceled', suspended_from = NULL, expired_at = ${now},
    updated_at = ${now} WHERE id = ${id} RETURNING ${TRAVEL_SOURCE}`.execute(trx)
  await followedBy(trx, rows)
}

/** Suspended: the status it had is kept to return to. */
export async function setSuspended(trx: Db, id: string, now: Date): Promise<void> {
  const { rows } =
    await sql<TravelSource>`UPDATE esims SET suspended_from = status, status = 'suspended', updated_at = ${now}
    WHERE id = ${id} AND status <> 'suspended' RETURNING ${TRAVEL_SOURCE}`.execute(trx)
  await followedBy(trx, rows)
}

export async function setResumed(trx: Db, id: string, now: Date): Promise<void> {
  const { rows } =
    await sql<TravelSource>`UPDATE esims SET status = COALESCE(suspended_from, 'enabled'), suspended_from = NULL,
    updated_at = ${now} WHERE id = ${id} AND status = 'suspended' RETURNING ${TRAVEL_SOURCE}`.execute(
      trx,
    )
  await followedBy(trx, rows)
}

/** Whether any data was used on any package of the eSIM. */
export async function anyDataUsed(trx: Db, id: string): Promise<boolean> {
  const row = await trx
    .selectFrom('esim_bundles')
    .select('order_id')
    .where('esim_id', '=', id)
    .where('data_used_mb', '>', 0)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}
