import type { Selectable } from 'kysely'
import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, inIndexOrderPage, type PageBounds } from '../../http/pagination.js'
import { withDeliveryEvents, type DeliveryEventFields } from '../events/index.js'
import type { EndpointRow } from './repo.js'
import type { WebhookDeliveriesTable, WebhookDeliveryAttemptsTable } from './types.js'

export type DeliveryRow = Selectable<WebhookDeliveriesTable>
export type AttemptRow = Selectable<WebhookDeliveryAttemptsTable>

/** A delivery claimed for one attempt, with what the attempt needs: the event and the endpoint. */
export interface ClaimedDelivery extends DeliveryRow, DeliveryEventFields {
  url: string
  secret_sealed: string
  previous_secret_sealed: string | null
  previous_secret_expires_at: Date | null
  endpoint_failing_since: Date | null
}

export interface DeliveryKey {
  eventId: string
  endpointId: string
}

/**
 * Every statement that locks several deliveries locks them in primary-key order (`event_id`, `endpoint_id`),
 * through a `locked` CTE that selects them `ORDER BY … FOR UPDATE` before the UPDATE joins it: claims, outcomes
 * and replays (the events module's `queueDeliveries` inserts in the same order) overlapping on some deliveries
 * then wait for one another instead of deadlocking, whatever order their batches came in.
 */
const IN_KEY_ORDER = sql`ORDER BY wd.event_id, wd.endpoint_id FOR UPDATE OF wd`

/**
 * Takes the next attempt of due, pending deliveries to enabled endpoints, many in one statement: of two
 * workers holding a job for the same delivery only one gets its row. The attempt counter moves here and
 * `next_attempt_at` becomes a lease: if the worker dies before recording the outcome, the delivery is
 * due again after it. Answers the claimed rows with the event (the events module's read plan,
 * `withDeliveryEvents`) and the endpoint each attempt needs, in the same statement.
 */
export async function claimDeliveries(
  db: Db,
  keys: DeliveryKey[],
  now: Date,
  leaseUntil: Date,
): Promise<ClaimedDelivery[]> {
  if (keys.length === 0) return []
  const values = sql.join(keys.map((k) => sql`(${k.eventId}::text, ${k.endpointId}::text)`))
  const due = sql`wd.status = 'pending' AND wd.next_attempt_at <= ${now}`
  const { rows } = await sql<ClaimedDelivery>`
    WITH k (event_id, endpoint_id) AS (VALUES ${values}),
    locked AS MATERIALIZED (
      SELECT wd.event_id, wd.endpoint_id FROM webhook_deliveries wd JOIN k ON wd.event_id = k.event_id AND wd.endpoint_id = k.endpoint_id
      WHERE ${due} AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = wd.endpoint_id AND w.status = 'enabled')
      ${IN_KEY_ORDER}
    ),
    d AS (
      UPDATE webhook_deliveries wd SET attempts = wd.attempts + 1, next_attempt_at = ${leaseUntil}, updated_at = ${now}
      FROM locked l
      WHERE wd.event_id = l.event_id AND wd.endpoint_id = l.endpoint_id AND ${due}
      RETURNING wd.*
    ),
    de AS (${withDeliveryEvents('d')})
    SELECT de.*, w.url, w.secret_sealed, w.previous_secret_sealed, w.previous_secret_expires_at, w.failing_since AS endpoint_failing_since
    FROM de JOIN webhook_endpoints w ON w.id = de.endpoint_id`.execute(db)
  return rows
}

/** One delivery's claim (tests and single calls). */
export async function claimDelivery(
  db: Db,
  eventId: string,
  endpointId: string,
  now: Date,
  leaseUntil: Date,
): Promise<ClaimedDelivery | undefined> {
  return (await claimDeliveries(db, [{ eventId, endpointId }], now, leaseUntil))[0]
}

export async function findDelivery(
  db: Db,
  eventId: string,
  endpointId: string,
): Promise<(DeliveryRow & { endpoint_status: string | null }) | undefined> {
  const { rows } = await sql<DeliveryRow & { endpoint_status: string | null }>`
    SELECT d.*, w.status AS endpoint_status FROM webhook_deliveries d LEFT JOIN webhook_endpoints w ON w.id = d.endpoint_id
    WHERE d.event_id = ${eventId} AND d.endpoint_id = ${endpointId}`.execute(db)
  return rows[0]
}

/** Ends a delivery whose endpoint was disabled or deleted before it went out (a replay re-opens it). */
export async function cancelDelivery(
  db: Db,
  eventId: string,
  endpointId: string,
  now: Date,
): Promise<void> {
  await sql`UPDATE webhook_deliveries SET status = 'canceled', updated_at = ${now}
    WHERE event_id = ${eventId} AND endpoint_id = ${endpointId} AND status = 'pending'`.execute(db)
}

export interface AttemptOutcome {
  attempt: Omit<AttemptRow, 'event_type'> & { event_type: string }
  status: DeliveryRow['status']
  failures: number
  nextAttemptAt: Date
  firstFailedAt: Date | null
}

/**
 * Records attempts and moves their deliveries on, many in one statement (each only if its attempt still owns the
 * delivery), locking the deliveries in key order (`IN_KEY_ORDER`).
 */
export async function recordAttempts(db: Db, outcomes: AttemptOutcome[]): Promise<void> {
  if (outcomes.length === 0) return
  const attempts = sql.join(
    outcomes.map(
      ({
        attempt: a,
      }) => sql`(${a.id}, ${a.event_id}, ${a.endpoint_id}, ${a.organization_id}, ${a.environment},
    ${a.event_type}, ${a.attempt}, ${a.url}, ${a.succeeded}, ${a.status_code}, ${a.duration_ms}, ${a.error}, ${a.response_body}, ${a.started_at}, ${a.created_at})`,
    ),
  )
  const moves = sql.join(
    outcomes.map(
      (
        o,
      ) => sql`(${o.attempt.event_id}::text, ${o.attempt.endpoint_id}::text, ${o.attempt.attempt}::int,
    ${o.status}::text, ${o.failures}::int, ${o.nextAttemptAt}::timestamptz, ${o.firstFailedAt}::timestamptz, ${o.attempt.created_at}::timestamptz,
    ${o.attempt.succeeded ? o.attempt.created_at : null}::timestamptz)`,
    ),
  )
  await sql`WITH a AS (
      INSERT INTO webhook_delivery_attempts (id, event_id, endpoint_id, organization_id, environment, event_type, attempt, url, succeeded,
        status_code, duration_ms, error, response_body, started_at, created_at)
      VALUES ${attempts}
    ), v (event_id, endpoint_id, attempt, status, failures, next_attempt_at, first_failed_at, at, delivered_at) AS (VALUES ${moves}),
    locked AS MATERIALIZED (
      SELECT v.* FROM webhook_deliveries wd JOIN v ON wd.event_id = v.event_id AND wd.endpoint_id = v.endpoint_id AND wd.attempts = v.attempt
      ${IN_KEY_ORDER}
    )
    UPDATE webhook_deliveries wd SET status = l.status, failures = l.failures, next_attempt_at = l.next_attempt_at,
      first_failed_at = l.first_failed_at, last_attempt_at = l.at, delivered_at = l.delivered_at, updated_at = l.at
    FROM locked l WHERE wd.event_id = l.event_id AND wd.endpoint_id = l.endpoint_id AND wd.attempts = l.attempt`.execute(
    db,
  )
}

/** Any success ends the endpoint's run of failures. */
export async function clearEndpointFailing(db: Db, endpointId: string): Promise<void> {
  await sql`UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ${endpointId} AND failing_since IS NOT NULL`.execute(
    db,
  )
}

/** The first failure of a run starts the endpoint's 72-hour clock. */
export async function markEndpointFailing(db: Db, endpointId: string, now: Date): Promise<void> {
  await sql`UPDATE webhook_endpoints SET failing_since = ${now} WHERE id = ${endpointId} AND failing_since IS NULL`.execute(
    db,
  )
}

/** Disables an endpoint that has failed without a break since `cutoff` or earlier; answers it when this call disabled it. */
export async function disableFailingEndpoint(
  trx: Db,
  endpointId: string,
  cutoff: Date,
  now: Date,
): Promise<EndpointRow | undefined> {
  const { rows } =
    await sql<EndpointRow>`UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = 'failing', updated_at = ${now}
    WHERE id = ${endpointId} AND status = 'enabled' AND failing_since IS NOT NULL AND failing_since <= ${cutoff}
    RETURNING *`.execute(trx)
  return rows[0]
}

export async function listAttempts(
  db: Db,
  by: { eventId?: string; endpointId?: string },
  bounds: PageBounds,
): Promise<AttemptRow[]> {
  let q = db.selectFrom('webhook_delivery_attempts').selectAll()
  if (by.eventId) q = q.where('event_id', '=', by.eventId)
  if (by.endpointId) q = q.where('endpoint_id', '=', by.endpointId)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

export async function deliveriesOfEvent(db: Db, eventId: string): Promise<DeliveryRow[]> {
  return db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('event_id', '=', eventId)
    .orderBy('endpoint_id')
    .execute()
}

export interface DeliveryLogFilter {
  /** `failed` also takes `canceled` deliveries (their endpoint was disabled or deleted before they went out). */
  status?: 'pending' | 'delivered' | 'failed'
  /** The event types taken (one exact type, or every type of a prefix); never together with `status`. */
  eventTypes?: readonly string[]
}

/**
 * A page of one endpoint's deliveries, newest first (ids sort by when each was first queued): a status reads
 * `webhook_deliveries_endpoint_status`, event types `webhook_deliveries_endpoint_type`, one range per value, merged.
 */
export async function listDeliveries(
  db: Db,
  endpointId: string,
  f: DeliveryLogFilter,
  bounds: PageBounds,
): Promise<DeliveryRow[]> {
  const q = db.selectFrom('webhook_deliveries').selectAll().where('endpoint_id', '=', endpointId)
  if (f.status !== undefined)
    return inIndexOrderPage(
      db,
      q,
      'status',
      f.status === 'failed' ? ['failed', 'canceled'] : [f.status],
      bounds,
    )
  return inIndexOrderPage(db, q, 'event_type', f.eventTypes, bounds)
}

/** The recorded attempts of the deliveries of some events to one endpoint, in attempt order. */
export async function attemptsOfDeliveries(
  db: Db,
  endpointId: string,
  eventIds: string[],
): Promise<AttemptRow[]> {
  if (eventIds.length === 0) return []
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('endpoint_id', '=', endpointId)
    .where('event_id', 'in', eventIds)
    .orderBy('attempt')
    .orderBy('id')
    .execute()
}

/** Every recorded attempt of one event's deliveries, in attempt order per endpoint. */
export async function attemptsOfEvent(db: Db, eventId: string): Promise<AttemptRow[]> {
  return db
    .selectFrom('webhook_delivery_attempts')
    .selectAll()
    .where('event_id', '=', eventId)
    .orderBy('endpoint_id')
    .orderBy('attempt')
    .orderBy('id')
    .execute()
}
