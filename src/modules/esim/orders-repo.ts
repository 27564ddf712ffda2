import { sql, type Selectable } from 'kysely'
import { createdInWindow, type CreatedWindow } from '../../db/created-window.js'
import type { Db } from '../../db/types.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import { clockTimeSql } from '../clocks/index.js'
import { json } from '../../db/types.js'
import {
  applyBounds,
  branchesOver,
  mergedPage,
  whereIn,
  type PageBounds,
} from '../../http/pagination.js'
import type { FxDetailsValue } from '../../http/fx-details.js'
import type { EsimOrdersTable } from './types.js'
import './types.js'

export type OrderRow = Selectable<EsimOrdersTable>

/** The database enforces reference uniqueness per (organization, environment), whatever races above it. */
export const REFERENCE_CONSTRAINT = 'esim_orders_reference'

export interface Reservation {
  /** Null when the package does not exist or is not on sale in the caller's view (nothing was written). */
  package: {
    id: string
    price: number
    currency: string
    data_mb: number | null
    validity_days: number
  } | null
  /** Null when the stock is empty (nothing was written). */
  profile: { iccid: string; smdp_address: string; matching_id: string } | null
  /** The package's price changed since the charge was computed (nothing was written): compute it again. */
  repriced?: boolean
}

export interface ReservationInput {
  id: string
  organizationId: string
  environment: string
  packageId: string
  cardholderId: string | null
  accountId: string | null
  /**
   * What the paying account is charged for the price the check saw (null: the organization is billed). The order is
   * written only while the package still has that price (`price`), so the charge always matches the order's price.
   */
  charge: { price: number; amount: number; currency: string; fx: FxDetailsValue | null } | null
  reference: string
  metadata: Record<string, string>
  /** Wall time: when the order goes to the network (`network_at`). */
  now: Date
}

/**
 * Checks that the package is on sale, reserves a blank profile and writes the order as in flight, in one
 * statement. SKIP LOCKED lets concurrent orders each take a different profile without waiting; a reference
 * already taken fails the whole statement (a unique violation: nothing reserved). The order takes the
 * package's price as it is now. Its own times are its cardholder's sandbox clock's when it is on one (read in the
 * statement, in the sandbox only), else `now`; `network_at` is `now`.
 */
export async function reserveOrder(db: Db, input: ReservationInput): Promise<Reservation> {
  const { charge } = input
  const cardholder = sql`${input.cardholderId}::text`
  const at =
    input.environment === 'sandbox' && input.cardholderId !== null
      ? sql`coalesce(${clockTimeSql(clockOfCardholderSql(cardholder))}, ${input.now}::timestamptz)`
      : sql`${input.now}::timestamptz`
  const { rows } = await sql<{
    id: string
    price: number
    currency: string
    data_mb: number | null
    validity_days: number
    iccid: string | null
    smdp_address: string | null
    matching_id: string | null
    priced: boolean
  }>`
    WITH pk AS (
      SELECT p.id, p.price, p.currency, p.data_mb, p.validity_days FROM esim_packages p
      LEFT JOIN esim_status_overrides ov ON ov.item_id = p.id AND ov.organization_id = ${input.organizationId} AND ov.environment = ${input.environment}
      WHERE p.id = ${input.packageId} AND (CASE WHEN p.status = 'withdrawn' THEN 'withdrawn' ELSE COALESCE(ov.status, p.status) END) = 'on_sale'
    ), priced AS (
      SELECT * FROM pk WHERE ${charge?.price ?? null}::bigint IS NULL OR pk.price = ${charge?.price ?? null}::bigint
    ), pr AS (
      UPDATE esim_profiles SET state = 'allocated', order_id = ${input.id}, updated_at = ${input.now}
      WHERE EXISTS (SELECT 1 FROM priced)
        AND iccid = (SELECT iccid FROM esim_profiles WHERE state = 'available' ORDER BY iccid LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING iccid, smdp_address, matching_id
    ), o AS (
      INSERT INTO esim_orders (id, organization_id, environment, type, status, package_id, top_up_id, esim_id, iccid, cardholder_id, account_id,
        price, currency, charged_amount, charged_currency, fx, reference, metadata, failure_reason, ledger_entry_id, network_at, created_at, updated_at, settled_at)
      SELECT ${input.id}, ${input.organizationId}, ${input.environment}, 'package', 'pending', pk.id, NULL, NULL, pr.iccid,
        ${input.cardholderId}, ${input.accountId}, pk.price, pk.currency, ${charge?.amount ?? null}::bigint, ${charge?.currency ?? null}::text,
        ${charge?.fx ? json(charge.fx) : null}::jsonb, ${input.reference}, ${json(input.metadata)}::jsonb, NULL, NULL,
        ${input.now}, ${at}, ${at}, NULL
      FROM pr CROSS JOIN priced AS pk
      RETURNING id
    )
    SELECT pk.id, pk.price, pk.currency, pk.data_mb, pk.validity_days, pr.iccid, pr.smdp_address, pr.matching_id,
      EXISTS (SELECT 1 FROM priced) AS priced
    FROM pk LEFT JOIN pr ON true`.execute(db)
  const row = rows[0]
  if (!row) return { package: null, profile: null }
  if (!row.priced) return { package: null, profile: null, repriced: true }
  return {
    package: {
      id: row.id,
      price: Number(row.price),
      currency: row.currency,
      data_mb: row.data_mb,
      validity_days: row.validity_days,
    },
    profile: row.iccid
      ? { iccid: row.iccid, smdp_address: row.smdp_address!, matching_id: row.matching_id! }
      : null,
  }
}

/**
 * Completes an order whose profile the network provisioned, in one statement: the order, its eSIM (valid until the
 * package's validity ends), the package running on it (validity from now), and the profile marked provisioned. Null when the order was
 * no longer open (settled meanwhile by someone else).
 */
export async function completeOrder(
  trx: Db,
  orderId: string,
  esimId: string,
  now: Date,
): Promise<OrderRow | null> {
  const { rows } = await sql<OrderRow>`
    WITH o AS (
      UPDATE esim_orders SET status = 'completed', esim_id = ${esimId}, settled_at = ${now}, updated_at = ${now}
      WHERE id = ${orderId} AND status IN ('pending', 'unsettled')
      RETURNING *
    ), pr AS (
      UPDATE esim_profiles SET state = 'provisioned', updated_at = ${now} FROM o WHERE esim_profiles.iccid = o.iccid
      RETURNING esim_profiles.iccid, esim_profiles.smdp_address, esim_profiles.matching_id
    ), e AS (
      INSERT INTO esims (id, organization_id, environment, iccid, smdp_address, matching_id, cardholder_id, order_id, status, valid_until,
        created_at, updated_at)
      SELECT ${esimId}, o.organization_id, o.environment, pr.iccid, pr.smdp_address, pr.matching_id, o.cardholder_id, o.id, 'released',
        ${now}::timestamptz + make_interval(days => pk.validity_days), ${now}, ${now}
      FROM o JOIN pr ON pr.iccid = o.iccid JOIN esim_packages pk ON pk.id = o.package_id
      RETURNING id
    ), b AS (
      INSERT INTO esim_bundles (order_id, esim_id, package_id, status, data_mb, data_used_mb, activated_at, expires_at, created_at, updated_at)
      SELECT o.id, e.id, pk.id, 'running', pk.data_mb, 0, ${now}, ${now}::timestamptz + make_interval(days => pk.validity_days), ${now}, ${now}
      FROM o CROSS JOIN e JOIN esim_packages pk ON pk.id = o.package_id
    )
    SELECT * FROM o`.execute(trx)
  return rows[0] ?? null
}

/**
 * Open orders settlement may decide (settlement sweep): unsettled ones (their create call has answered)
 * marked before `unsettledBefore`, and in-flight ones sent before `pendingBefore`, whose create call has
 * certainly ended (its process died), by the network's wall time (`network_at`), oldest first.
 */
export async function openOrdersBefore(
  db: Db,
  unsettledBefore: Date,
  pendingBefore: Date,
  limit: number,
): Promise<string[]> {
  const rows = await db
    .selectFrom('esim_orders')
    .select('id')
    .where('status', 'in', ['pending', 'unsettled']) // the partial index esim_orders_open
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'unsettled'), eb('network_at', '<', unsettledBefore)]),
        eb.and([eb('status', '=', 'pending'), eb('network_at', '<', pendingBefore)]),
      ]),
    )
    .orderBy('network_at')
    .limit(limit)
    .execute()
  return rows.map((r) => r.id)
}

/** How many open orders the API shows as unsettled (in-flight ones only once sent before `inFlightShownBefore`), and the oldest. */
export async function unsettledOrders(
  db: Db,
  inFlightShownBefore: Date,
): Promise<{
  count: number
  oldest: Pick<OrderRow, 'id' | 'organization_id' | 'environment' | 'status' | 'created_at'> | null
}> {
  const open = db
    .selectFrom('esim_orders')
    .where('status', 'in', ['pending', 'unsettled']) // the partial index esim_orders_open
    .where((eb) =>
      eb.or([eb('status', '=', 'unsettled'), eb('network_at', '<', inFlightShownBefore)]),
    )
  const [counted, oldest] = await Promise.all([
    open.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirst(),
    open
      .select(['id', 'organization_id', 'environment', 'status', 'created_at'])
      .orderBy('network_at')
      .orderBy('id')
      .limit(1)
      .executeTakeFirst(),
  ])
  return { count: Number(counted?.n ?? 0), oldest: oldest ?? null }
}

export async function insertOrder(trx: Db, row: OrderRow): Promise<void> {
  await trx
    .insertInto('esim_orders')
    .values({ ...row, metadata: json(row.metadata), fx: row.fx === null ? null : json(row.fx) })
    .execute()
}

export async function findOrder(db: Db, id: string): Promise<OrderRow | undefined> {
  return db.selectFrom('esim_orders').selectAll().where('id', '=', id).executeTakeFirst()
}

/**
 * The order under its row lock: settlement and the request that created it never both apply an outcome. With it, the
 * sandbox clock of its cardholder (`clock_id`, null when none), read in the same statement.
 */
export async function lockOrder(
  trx: Db,
  id: string,
): Promise<(OrderRow & { clock_id: string | null }) | undefined> {
  return trx
    .selectFrom('esim_orders')
    .selectAll()
    .select(clockOfCardholderSql(sql.ref('esim_orders.cardholder_id')).as('clock_id'))
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

export type OrderChanges = Partial<
  Pick<
    OrderRow,
    | 'status'
    | 'esim_id'
    | 'iccid'
    | 'failure_reason'
    | 'ledger_entry_id'
    | 'settled_at'
    | 'network_at'
  >
>

export async function updateOrder(
  trx: Db,
  id: string,
  changes: OrderChanges,
  now: Date,
): Promise<OrderRow> {
  return trx
    .updateTable('esim_orders')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** The completed orders that put packages on an eSIM and are not refunded yet, oldest first. */
export async function refundableOrdersOf(trx: Db, esimId: string): Promise<OrderRow[]> {
  return trx
    .selectFrom('esim_orders')
    .selectAll()
    .where('esim_id', '=', esimId)
    .where('status', '=', 'completed')
    .where('refunded_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

export async function markRefunded(trx: Db, id: string, now: Date): Promise<void> {
  await trx
    .updateTable('esim_orders')
    .set({ refunded_at: now, updated_at: now })
    .where('id', '=', id)
    .execute()
}

export async function deleteOrder(trx: Db, id: string): Promise<void> {
  await trx.deleteFrom('esim_orders').where('id', '=', id).execute()
}

export interface OrderFilters {
  reference?: string
  status?: string
  cardholderId?: string
  /** `manual` or `auto` (auto top-ups). */
  trigger?: string
  /** Orders still in flight are listed only when created before this (their create call can no longer answer). */
  inFlightShownBefore: Date
}

/**
 * A page of the scope's orders, newest first. `reference` is unique in the scope and `cardholder_id` has its index;
 * `status` alone reads `esim_orders_status` (unsettled: the ranges of `unsettled` and of `pending`, merged).
 */
export async function listOrders(
  db: Db,
  organizationId: string,
  environment: string,
  filters: OrderFilters,
  bounds: PageBounds,
): Promise<OrderRow[]> {
  let q = db
    .selectFrom('esim_orders')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .where((eb) =>
      eb.or([eb('status', '!=', 'pending'), eb('network_at', '<', filters.inFlightShownBefore)]),
    )
  if (filters.reference !== undefined) q = q.where('reference', '=', filters.reference)
  if (filters.cardholderId !== undefined) q = q.where('cardholder_id', '=', filters.cardholderId)
  // `trigger` alone reads `esim_orders_trigger` (auto top-ups are few among bought orders).
  if (filters.trigger !== undefined) q = q.where('trigger', '=', filters.trigger)
  // An order in flight past its create call's deadline (its process died) reads as unsettled.
  const statuses =
    filters.status === 'unsettled'
      ? ['unsettled', 'pending']
      : filters.status !== undefined
        ? [filters.status]
        : []
  if (statuses.length === 0) return applyBounds(q, bounds, 'id', 'desc').execute()
  if (filters.reference !== undefined || filters.cardholderId !== undefined) {
    return applyBounds(whereIn(q, 'status', statuses), bounds, 'id', 'desc').execute()
  }
  return mergedPage(db, branchesOver(q, { status: statuses }), bounds, 'id', 'desc')
}

/** The organization's orders by creation time, oldest first, one keyset batch (the eSIM billing report). */
export async function ordersCreatedIn(db: Db, w: CreatedWindow): Promise<OrderRow[]> {
  return createdInWindow(db.selectFrom('esim_orders').selectAll(), w).execute()
}
