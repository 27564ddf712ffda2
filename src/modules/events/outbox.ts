import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../db/types.js'
import type { JobType } from '../../jobs/types.js'
import { JOBS_CHANNEL, signalJobsQueued } from '../../jobs/wakeup.js'
import { idHeadAt } from '../../lib/ids.js'
import { NAMED_ENDPOINT_TYPES } from './catalog.js'

/** The job type that delivers one event to one endpoint. */
export const DELIVERY_JOB = 'webhook.deliver' satisfies JobType

/** One job per (event, endpoint) at a time: a replay of a queued delivery moves that job instead of adding a second. */
export function deliveryJobId(eventId: string, endpointId: string): string {
  return `job_wh_${eventId}_${endpointId}` // deliveriesWithin builds the same id in SQL
}

export interface DeliveryTarget {
  eventId: string
  endpointId: string
}

/**
 * The `whd_` id of the delivery of `eventId` to `endpointId` first queued at `now`: the time part of `now`, then the first
 * 16 hexadecimal digits (uppercase, which the id alphabet contains) of an MD5 of the pair. Written once, when the
 * delivery is created; a replay keeps it.
 */
function deliveryIdSql(now: Date, eventId: SqlOperand, endpointId: SqlOperand): RawBuilder<string> {
  return sql<string>`(${idHeadAt('whd', now)}::text || upper(substr(md5(${eventId} || ' ' || ${endpointId}), 1, 16)))`
}

/**
 * Queues stored events again (replays): writes deliveries and their jobs in the caller's transaction and
 * wakes the workers at commit. A finished delivery is re-opened with its attempt counter intact, so the
 * next attempt carries a new, higher Svc-Delivery-Attempt; a job still queued is moved, not doubled.
 * New events queue theirs in the statement that writes them (`deliveriesWithin`).
 */
export async function queueDeliveries(
  trx: Db,
  scope: { organizationId: string; environment: string },
  targets: DeliveryTarget[],
  now: Date,
): Promise<void> {
  if (targets.length === 0) return
  const { organizationId: org, environment: env } = scope
  const pairs = sql.join(targets.map((t) => sql`(${t.eventId}::text, ${t.endpointId}::text)`))
  const jobs = sql.join(
    targets.map(
      (t) =>
        sql`(${deliveryJobId(t.eventId, t.endpointId)}, ${DELIVERY_JOB}, ${JSON.stringify({ event_id: t.eventId, endpoint_id: t.endpointId })}::jsonb,
      ${org}, ${env}, 'queued', ${now}::timestamptz, 0, ${now}::timestamptz, ${now}::timestamptz)`,
    ),
  )
  await sql`WITH t (event_id, endpoint_id) AS (VALUES ${pairs}), d AS (
      INSERT INTO webhook_deliveries (id, event_id, endpoint_id, organization_id, environment, event_type, status, attempts, failures, next_attempt_at, created_at, updated_at)
      SELECT ${deliveryIdSql(now, sql.ref('t.event_id'), sql.ref('t.endpoint_id'))}, t.event_id, t.endpoint_id, ${org}, ${env}, e.type, 'pending', 0, 0,
        ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz
      FROM t JOIN events AS e ON e.id = t.event_id
      -- Deliveries and jobs are locked in key order, as the webhooks module locks deliveries: no deadlock between them.
      ORDER BY t.event_id, t.endpoint_id
      ON CONFLICT (event_id, endpoint_id)
      DO UPDATE SET status = 'pending', failures = 0, first_failed_at = NULL, next_attempt_at = EXCLUDED.next_attempt_at, updated_at = EXCLUDED.updated_at
    ), j AS (
      INSERT INTO jobs (id, type, payload, organization_id, environment, state, run_at, attempts, created_at, updated_at)
      SELECT * FROM (VALUES ${jobs}) AS v (id, type, payload, organization_id, environment, state, run_at, attempts, created_at, updated_at)
      ORDER BY id
      ON CONFLICT (id)
      DO UPDATE SET run_at = LEAST(jobs.run_at, EXCLUDED.run_at), updated_at = EXCLUDED.updated_at WHERE jobs.locked_by IS NULL
    )
    SELECT pg_notify(${JOBS_CHANNEL}, '')`.execute(trx)
  signalJobsQueued()
}

/**
 * Whether the subscription list `enabledEvents` (a jsonb array of `*`, types and `<prefix>.*` wildcards) takes events
 * of `type`: SQL's form of `subscribes`, one containment test per accepted form (each a jsonb_ops GIN lookup
 * should the column ever be indexed). A type's prefix is the text before its dot (`card.*` for `card.created`).
 * A type delivered only to the endpoint it names (`webhook_endpoint.test`) is taken by no list.
 */
export function subscribedSql(enabledEvents: SqlOperand, type: SqlOperand): RawBuilder<boolean> {
  return sql<boolean>`(${notNamedEndpointTypeSql(type)} AND (${enabledEvents} @> '["*"]'::jsonb OR ${enabledEvents} @> jsonb_build_array(${type})
          OR ${enabledEvents} @> jsonb_build_array(split_part(${type}, '.', 1) || '.*')))`
}

/** True unless `type` is delivered only to the endpoint it names (the catalogue's `delivery: 'named_endpoint'`). */
function notNamedEndpointTypeSql(type: SqlOperand): RawBuilder<boolean> {
  if (NAMED_ENDPOINT_TYPES.length === 0) return sql<boolean>`true`
  return sql<boolean>`${type} NOT IN (${sql.join(NAMED_ENDPOINT_TYPES.map((t) => sql.lit(t)))})`
}

type SqlOperand = RawBuilder<unknown> | ReturnType<typeof sql.ref>

/**
 * The deliveries of new events, for the statement that writes them (`emit`, `emitPerRow`: batched ledger adjustments and
 * authorization decisions): common table expressions that fan the events in `events` (a CTE returning `id`,
 * `organization_id`, `environment` and `type`) out to each event's enabled endpoints subscribed to it (`*`, the type
 * or its prefix wildcard: `subscribedSql`, as `subscribes` decides), one delivery and one job each. `notified` is a
 * column expression that sends the NOTIFY when anything was queued and counts it (0 or 1), so the caller knows to
 * wake this process's runners.
 */
export function deliveriesWithin(
  events: string,
  now: Date,
): { ctes: RawBuilder<unknown>; notified: RawBuilder<number> } {
  const ev = sql.table(events)
  const ctes = sql`wh_to AS (
      SELECT ev.id AS event_id, we.id AS endpoint_id, ev.organization_id, ev.environment, ev.type FROM ${ev} AS ev
      JOIN webhook_endpoints AS we ON we.organization_id = ev.organization_id AND we.environment = ev.environment AND we.status = 'enabled'
        AND ${subscribedSql(sql.ref('we.enabled_events'), sql.ref('ev.type'))}
    ), wh_d AS (
      INSERT INTO webhook_deliveries (id, event_id, endpoint_id, organization_id, environment, event_type, status, attempts, failures, next_attempt_at, created_at, updated_at)
      SELECT ${deliveryIdSql(now, sql.ref('event_id'), sql.ref('endpoint_id'))}, event_id, endpoint_id, organization_id, environment, type, 'pending', 0, 0,
        ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz FROM wh_to
      ON CONFLICT (event_id, endpoint_id) DO NOTHING
    ), wh_j AS (
      INSERT INTO jobs (id, type, payload, organization_id, environment, state, run_at, attempts, created_at, updated_at)
      SELECT 'job_wh_' || event_id || '_' || endpoint_id, ${DELIVERY_JOB}, jsonb_build_object('event_id', event_id, 'endpoint_id', endpoint_id),
        organization_id, environment, 'queued', ${now}::timestamptz, 0, ${now}::timestamptz, ${now}::timestamptz FROM wh_to
      ON CONFLICT (id) DO NOTHING
    )`
  const notified = sql<number>`(SELECT count(pg_notify(${JOBS_CHANNEL}, '')) FROM (SELECT 1 FROM wh_to LIMIT 1) AS wh_any)::int`
  return { ctes, notified }
}
