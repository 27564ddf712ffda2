import type { Environment } from '../../config.js'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import { scopeOfRow } from '../../http/context.js'
import { Coalescer } from '../../jobs/coalesce.js'
import type { JobOutcome, JobRecord } from '../../jobs/queue.js'
import { BoundedCache } from '../../lib/bounded-cache.js'
import { newId } from '../../lib/ids.js'
import { signatureHeader } from '../../lib/webhook-signature.js'
import { emit, presentEvent } from '../events/index.js'
import { moduleState } from '../module.js'
import * as deliveries from './delivery-repo.js'
import { nextRetry, retryPeriodMs } from './retry.js'
import { signingSecrets } from './secrets.js'
import { sendWebhook, type SendResult } from './sender.js'
import { presentEndpoint } from './service.js'

/** How long a claimed attempt may take before another worker may make it (well above the 10 s timeout). */
export const ATTEMPT_LEASE_MS = 60_000

interface ClaimInput extends deliveries.DeliveryKey {
  now: Date
  leaseUntil: Date
}

/**
 * Concurrent deliveries share their database work: one statement claims every attempt started in the
 * same turn of the event loop, one records the outcomes that arrive within a millisecond of each other.
 * One per database handle (`DELIVERIES`, built once per runtime): two runners on two pools
 * in one process never share a batch.
 */
export class DeliveryCoalescers {
  readonly claims: Coalescer<ClaimInput, deliveries.ClaimedDelivery | undefined>
  readonly records: Coalescer<deliveries.AttemptOutcome, void>

  constructor(db: Db) {
    this.claims = new Coalescer(async (inputs) => {
      const now = new Date(Math.max(...inputs.map((i) => i.now.getTime())))
      const lease = new Date(Math.max(...inputs.map((i) => i.leaseUntil.getTime())))
      const rows = await deliveries.claimDeliveries(db, inputs, now, lease)
      const byKey = new Map(rows.map((r) => [`${r.event_id} ${r.endpoint_id}`, r]))
      return inputs.map((i) => byKey.get(`${i.eventId} ${i.endpointId}`))
    })
    this.records = new Coalescer<deliveries.AttemptOutcome, void>(
      async (outcomes) => {
        await deliveries.recordAttempts(db, outcomes)
        return outcomes.map(() => undefined)
      },
      { delayMs: 1 },
    )
  }
}

/** The request headers of one attempt; the headers are untrusted until the receiver checks the signature. */
export function deliveryHeaders(
  body: string,
  d: { event_id: string; event_type: string; attempts: number },
  secrets: string[],
  now: Date,
): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': 'svc-webhooks/1.0',
    'svc-signature': signatureHeader(body, secrets, Math.floor(now.getTime() / 1000)),
    'svc-event-id': d.event_id,
    'svc-event-type': d.event_type,
    'svc-delivery-attempt': String(d.attempts),
  }
}

/** A runtime's delivery batches on its database, and the endpoints' signing secrets decrypted once per sealed value. */
export const DELIVERIES = moduleState('webhooks.deliveries', (deps) => ({
  coalescers: new DeliveryCoalescers(deps.db),
  secrets: new BoundedCache<string, string>(1_000),
}))

/**
 * Delivers one event to one endpoint, once per call: claim the attempt, POST it signed, record the
 * outcome. A failure schedules the next attempt; a failure at the end of the retry period gives the
 * delivery up and, when the endpoint has failed without a break for the whole period, disables it.
 */
export async function deliverWebhook(deps: AppDeps, job: JobRecord): Promise<JobOutcome> {
  const { event_id: eventId, endpoint_id: endpointId } = job.payload as {
    event_id: string
    endpoint_id: string
  }
  const now = deps.clock.now()
  const d = await deps.state.of(DELIVERIES).coalescers.claims.call({
    eventId,
    endpointId,
    now,
    leaseUntil: new Date(now.getTime() + ATTEMPT_LEASE_MS),
  })
  if (!d) {
    const state = await deliveries.findDelivery(deps.db, eventId, endpointId)
    if (!state || state.status !== 'pending') return
    if (state.endpoint_status !== 'enabled') {
      await deliveries.cancelDelivery(deps.db, eventId, endpointId, now)
      return
    }
    return { retryAt: state.next_attempt_at }
  }

  const body = JSON.stringify(
    presentEvent({ ...d, type: d.event_type, id: d.event_id, created_at: d.event_created_at }),
  )
  const secrets = signingSecrets(deps.config.masterKey, d, now, deps.state.of(DELIVERIES).secrets)
  const result = await sendWebhook(
    new URL(d.url),
    body,
    deliveryHeaders(body, d, secrets, now),
    deps.config.webhookUrlPolicy[d.environment as Environment],
  )
  return recordOutcome(deps, d, result, now)
}

async function recordOutcome(
  deps: AppDeps,
  d: deliveries.ClaimedDelivery,
  result: SendResult,
  startedAt: Date,
): Promise<JobOutcome> {
  const at = deps.clock.now()
  const succeeded =
    result.statusCode !== null && result.statusCode >= 200 && result.statusCode < 300
  const attempt = {
    id: newId('wha'),
    event_id: d.event_id,
    endpoint_id: d.endpoint_id,
    organization_id: d.organization_id,
    environment: d.environment,
    event_type: d.event_type,
    attempt: d.attempts,
    url: d.url,
    succeeded,
    status_code: result.statusCode,
    duration_ms: result.durationMs,
    error: result.error ?? (succeeded ? null : `HTTP ${result.statusCode}`),
    response_body: result.responseBody,
    started_at: startedAt,
    created_at: at,
  }
  if (succeeded) {
    await deps.state.of(DELIVERIES).coalescers.records.call({
      attempt,
      status: 'delivered',
      failures: 0,
      nextAttemptAt: at,
      firstFailedAt: null,
    })
    if (d.endpoint_failing_since) await deliveries.clearEndpointFailing(deps.db, d.endpoint_id)
    return
  }

  const schedule = deps.config.webhookRetryScheduleSeconds
  const failures = d.failures + 1
  const firstFailedAt = d.first_failed_at ?? at
  const next = nextRetry(schedule, failures, firstFailedAt, at)
  await deps.state.of(DELIVERIES).coalescers.records.call({
    attempt,
    status: next.giveUp ? 'failed' : 'pending',
    failures,
    nextAttemptAt: next.giveUp ? at : next.at,
    firstFailedAt,
  })
  if (!d.endpoint_failing_since) await deliveries.markEndpointFailing(deps.db, d.endpoint_id, at)
  if (!next.giveUp) return { retryAt: next.at }

  const cutoff = new Date(at.getTime() - retryPeriodMs(schedule))
  await withTx(deps.db, async (trx) => {
    const disabled = await deliveries.disableFailingEndpoint(trx, d.endpoint_id, cutoff, at)
    if (!disabled) return
    deps.log.warn(
      { webhook_endpoint_id: d.endpoint_id },
      'webhook endpoint disabled after continuous failure',
    )
    await emit(trx, scopeOfRow(d), 'webhook_endpoint.disabled', presentEndpoint(disabled), at)
  })
}
