import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { JOBS_CHANNEL, signalJobsQueued } from '../../jobs/wakeup.js'

/** The job type that delivers one event to one endpoint. */
export const DELIVERY_JOB = 'webhook.deliver'

/** One job per (event, endpoint) at a time: a replay of a queued delivery moves that job instead of adding a second. */
export function deliveryJobId(eventId: string, endpointId: string): string {
  return `job_wh_${eventId}_${endpointId}`
}

export interface DeliveryTarget { eventId: string; endpointId: string }

/**
 * Writes deliveries and their jobs in the caller's transaction (transactional outbox) and wakes the
 * workers at commit. `replay` re-opens finished deliveries with their attempt counter intact, so the
 * next attempt carries a new, higher Svc-Delivery-Attempt.
 */
export async function queueDeliveries(
  trx: Db,
  scope: { organizationId: string; environment: string },
  targets: DeliveryTarget[],
  now: Date,
  mode: 'new' | 'replay',
): Promise<void> {
  if (targets.length === 0) return
  const { organizationId: org, environment: env } = scope
  const deliveries = sql.join(targets.map((t) =>
    sql`(${t.eventId}, ${t.endpointId}, ${org}, ${env}, 'pending', 0, 0, ${now}::timestamptz, ${now}::timestamptz, ${now}::timestamptz)`))
  const jobs = sql.join(targets.map((t) =>
    sql`(${deliveryJobId(t.eventId, t.endpointId)}, ${DELIVERY_JOB}, ${JSON.stringify({ event_id: t.eventId, endpoint_id: t.endpointId })}::jsonb,
      ${org}, ${env}, 'queued', ${now}::timestamptz, 0, ${now}::timestamptz, ${now}::timestamptz)`))
  const onDelivery = mode === 'replay'
    ? sql`DO UPDATE SET status = 'pending', failures = 0, first_failed_at = NULL, next_attempt_at = EXCLUDED.next_attempt_at, updated_at = EXCLUDED.updated_at`
    : sql`DO NOTHING`
  const onJob = mode === 'replay'
    ? sql`DO UPDATE SET run_at = LEAST(jobs.run_at, EXCLUDED.run_at), updated_at = EXCLUDED.updated_at WHERE jobs.locked_by IS NULL`
    : sql`DO NOTHING`
  await sql`WITH d AS (
      INSERT INTO webhook_deliveries (event_id, endpoint_id, organization_id, environment, status, attempts, failures, next_attempt_at, created_at, updated_at)
      VALUES ${deliveries}
      ON CONFLICT (event_id, endpoint_id) ${onDelivery}
    ), j AS (
      INSERT INTO jobs (id, type, payload, organization_id, environment, state, run_at, attempts, created_at, updated_at)
      VALUES ${jobs}
      ON CONFLICT (id) ${onJob}
    )
    SELECT pg_notify(${JOBS_CHANNEL}, '')`.execute(trx)
  signalJobsQueued()
}
