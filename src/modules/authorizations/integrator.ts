import type { AppDeps } from '../../app-deps.js'
import type { Environment } from '../../config.js'
import type { Scope } from '../../http/context.js'
import { autonomousDb } from '../../http/request-unit.js'
import { BoundedCache } from '../../lib/bounded-cache.js'
import { newId } from '../../lib/ids.js'
import { EVENT_API_VERSION } from '../events/index.js'
import { moduleState } from '../module.js'
import {
  deliveryHeaders,
  RESPONSE_READ_LIMIT,
  sendWebhook,
  signingSecrets,
  type SendResult,
} from '../webhooks/index.js'
import * as repo from './endpoint-repo.js'
import type { AuthorizationView } from './schemas.js'
import type { AuthorizationEndpointAttemptsTable, DecisionRecord } from './types.js'

/** How long a process trusts what it read of a scope's endpoint (PUT, DELETE and rotate_secret clear it at once in their own process). */
export const ENDPOINT_CACHE_MS = 5_000
/** Consecutive stand-ins after which the endpoint is skipped … */
export const CIRCUIT_THRESHOLD = 5
/** … for this long (stand-in at once), then tried again. */
export const CIRCUIT_OPEN_MS = 30_000
/** The type of the signed request, as `Svc-Event-Type` and the body's `type` name it. */
export const REQUEST_TYPE = 'authorization.request'

export interface CachedAuthorizationEndpoint {
  row: repo.AuthorizationEndpointRow | null
  until: number
}
/** One endpoint's breaker: stand-ins in a row, and until when it is skipped (0: closed). */
export interface CircuitState {
  failures: number
  openUntil: number
}

export type StandInReason = NonNullable<DecisionRecord['stand_in_reason']>

/** What the integrator (or its stand-in) decided, handed to the decision that writes it. */
export interface IntegratorOutcome {
  decision: DecisionRecord
  /** Declined by the integrator (`integrator_declined`) or by a `decline` stand-in (`integrator_unavailable`); null: approve. */
  decline: 'integrator_declined' | 'integrator_unavailable' | null
  /** A partial approval: the amount to approve and hold instead of the amount asked; null: as asked. */
  amount: number | null
}

/** The decision of a request no integrator was asked about. */
export const SVC_DECISION: DecisionRecord = { source: 'svc', latency_ms: 0 }

/** This process's view of each scope's endpoint and its breaker, and the endpoints' decrypted signing secrets. */
export const INTEGRATOR_CACHES = moduleState('authorizations.integrator', () => ({
  /** Each scope's endpoint, or that it has none, for `ENDPOINT_CACHE_MS`; PUT, DELETE and rotate_secret clear it. */
  endpoints: new BoundedCache<string, CachedAuthorizationEndpoint>(50_000),
  /** Each scope's circuit breaker (consecutive stand-ins, open until). */
  circuits: new BoundedCache<string, CircuitState>(50_000),
  /** Signing secrets, decrypted once per sealed value. */
  secrets: new BoundedCache<string, string>(1_000),
}))

const scopeKey = (scope: Scope) => `${scope.organizationId}\u0000${scope.environment}`

/**
 * The scope's authorization endpoint, or null: read at most once per `ENDPOINT_CACHE_MS` per scope and process,
 * so a scope without one pays a map lookup per authorization and nothing more.
 */
export async function endpointFor(
  deps: AppDeps,
  scope: Scope,
): Promise<repo.AuthorizationEndpointRow | null> {
  const key = scopeKey(scope)
  const now = deps.clock.now().getTime()
  const hit = deps.state.of(INTEGRATOR_CACHES).endpoints.get(key)
  if (hit && hit.until > now) return hit.row
  const row = (await repo.findEndpoint(deps.db, scope.organizationId, scope.environment)) ?? null
  deps.state.of(INTEGRATOR_CACHES).endpoints.set(key, { row, until: now + ENDPOINT_CACHE_MS })
  return row
}

/** After a change of the scope's endpoint: this process reads it again, and its breaker starts closed. */
export function forgetEndpoint(deps: AppDeps, scope: Scope): void {
  deps.state.of(INTEGRATOR_CACHES).endpoints.delete(scopeKey(scope))
  deps.state.of(INTEGRATOR_CACHES).circuits.delete(scopeKey(scope))
}

/** Whether this process skips the scope's endpoint now (its circuit is open). */
export function circuitOpen(deps: AppDeps, scope: Scope): boolean {
  const state = deps.state.of(INTEGRATOR_CACHES).circuits.get(scopeKey(scope))
  return state !== undefined && state.openUntil > deps.clock.now().getTime()
}

function recordCircuit(deps: AppDeps, scope: Scope, stoodIn: boolean): void {
  const key = scopeKey(scope)
  if (!stoodIn) {
    deps.state.of(INTEGRATOR_CACHES).circuits.delete(key)
    return
  }
  const state = deps.state.of(INTEGRATOR_CACHES).circuits.get(key) ?? { failures: 0, openUntil: 0 }
  state.failures++
  // Past the threshold every further stand-in (the first try after the pause included) opens it again.
  if (state.failures >= CIRCUIT_THRESHOLD)
    state.openUntil = deps.clock.now().getTime() + CIRCUIT_OPEN_MS
  deps.state.of(INTEGRATOR_CACHES).circuits.set(key, state)
}

type Answer =
  | { kind: 'approved'; amount: number | null }
  | { kind: 'declined' }
  /** `unreadable`: a body that may hold a decline was not read whole; it declines whatever the stand-in setting. */
  | { kind: 'stand_in'; reason: StandInReason; error: string; unreadable?: true }

/** The body as JSON, or undefined when it is not JSON. */
function parsed(body: string | null): unknown {
  try {
    return JSON.parse(body ?? '')
  } catch {
    return undefined
  }
}

const isDecline = (body: unknown): boolean =>
  typeof body === 'object' && body !== null && (body as { approved?: unknown }).approved === false

/**
 * Reads the endpoint's answer: 2xx with `{"approved": true[, "amount": n]}` or `{"approved": false}`; anything else
 * stands in. An explicit decline is never turned into an approval: `{"approved": false}` declines whatever the
 * status, and a body that did not arrive whole (over RESPONSE_READ_LIMIT, 64 KiB, or cut off) is never read as an
 * approval, since it may hold a decline: it declines even under `stand_in: approve`.
 */
export function readAnswer(
  result: Pick<SendResult, 'statusCode' | 'error' | 'responseBody' | 'bodyIncomplete'>,
  requested: number,
): Answer {
  if (result.statusCode === null) {
    const timedOut = (result.error ?? '').startsWith('ETIMEDOUT')
    return {
      kind: 'stand_in',
      reason: timedOut ? 'timeout' : 'error',
      error: result.error ?? 'no response',
    }
  }
  if (result.bodyIncomplete !== null) {
    return {
      kind: 'stand_in',
      reason: 'invalid_response',
      error: `${result.bodyIncomplete}: never read as an approval`,
      unreadable: true,
    }
  }
  const body = parsed(result.responseBody)
  if (isDecline(body)) return { kind: 'declined' }
  if (result.statusCode < 200 || result.statusCode >= 300)
    return { kind: 'stand_in', reason: 'error', error: `HTTP ${result.statusCode}` }
  const invalid = (error: string): Answer => ({
    kind: 'stand_in',
    reason: 'invalid_response',
    error,
  })
  if (body === undefined) return invalid('the body is not JSON')
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return invalid('the body is not a JSON object')
  const { approved, amount } = body as { approved?: unknown; amount?: unknown }
  if (approved !== true) return invalid('`approved` is not true or false')
  if (amount === undefined || amount === null) return { kind: 'approved', amount: null }
  if (
    typeof amount !== 'number' ||
    !Number.isInteger(amount) ||
    amount <= 0 ||
    amount > requested
  ) {
    return invalid(`\`amount\` must be an integer above 0 and at most ${requested}`)
  }
  return { kind: 'approved', amount: amount === requested ? null : amount }
}

/** What the endpoint is asked about. */
export interface IntegratorQuestion {
  scope: Scope
  /** The authorization as it would be written if approved (status pending, approved true, no hold yet). */
  authorization: AuthorizationView
  request: { type: 'authorization' | 'increment'; amount: number }
  /** The API request that caused it (`req_`), for the attempt log. */
  requestId: string | null
}

/**
 * Asks the scope's endpoint to decide, outside any database transaction and within its `timeout_ms`: one signed
 * POST (the webhooks' signature and headers). While its circuit is open nothing is sent and the stand-in answers.
 * Answers the outcome and the write of the attempt log (committed on its own, beside the decision and never
 * inside its batch or a request's transaction; a failed log write is logged and does not fail the decision).
 */
export async function askIntegrator(
  deps: AppDeps,
  endpoint: repo.AuthorizationEndpointRow,
  q: IntegratorQuestion,
): Promise<{ outcome: IntegratorOutcome; logged: Promise<void> }> {
  const at = deps.clock.now()
  let answer: Answer
  let result: Pick<SendResult, 'statusCode' | 'durationMs'>
  if (circuitOpen(deps, q.scope)) {
    answer = {
      kind: 'stand_in',
      reason: 'error',
      error: `circuit open: ${CIRCUIT_THRESHOLD} stand-ins in a row, skipped for ${CIRCUIT_OPEN_MS / 1000} s`,
    }
    result = { statusCode: null, durationMs: 0 }
  } else {
    const eventId = newId('evt', at)
    const body = JSON.stringify({
      id: eventId,
      object: 'event',
      type: REQUEST_TYPE,
      api_version: EVENT_API_VERSION,
      environment: q.scope.environment,
      created_at: at.toISOString(),
      data: { object: q.authorization, request: q.request },
    })
    const secrets = signingSecrets(
      deps.config.masterKey,
      endpoint,
      at,
      deps.state.of(INTEGRATOR_CACHES).secrets,
    )
    const headers = deliveryHeaders(
      body,
      { event_id: eventId, event_type: REQUEST_TYPE, attempts: 1 },
      secrets,
      at,
    )
    const policy = deps.config.webhookUrlPolicy[q.scope.environment as Environment]
    // The whole answer (up to RESPONSE_READ_LIMIT) is parsed; only the webhooks' delivery log keeps a prefix.
    const sent = await sendWebhook(
      new URL(endpoint.url),
      body,
      headers,
      policy,
      endpoint.timeout_ms,
      RESPONSE_READ_LIMIT,
    )
    answer = readAnswer(sent, q.request.amount)
    result = sent
    recordCircuit(deps, q.scope, answer.kind === 'stand_in')
  }

  const latency = result.durationMs
  const outcome: IntegratorOutcome =
    answer.kind === 'approved'
      ? {
          decision: { source: 'integrator', latency_ms: latency },
          decline: null,
          amount: answer.amount,
        }
      : answer.kind === 'declined'
        ? {
            decision: { source: 'integrator', latency_ms: latency },
            decline: 'integrator_declined',
            amount: null,
          }
        : {
            decision: { source: 'stand_in', latency_ms: latency, stand_in_reason: answer.reason },
            decline:
              endpoint.stand_in === 'decline' || answer.unreadable
                ? 'integrator_unavailable'
                : null,
            amount: null,
          }
  const attempt: AuthorizationEndpointAttemptsTable = {
    id: newId('aea'),
    organization_id: q.scope.organizationId,
    environment: q.scope.environment,
    authorization_id: q.authorization.id,
    request_type: q.request.type,
    request_id: q.requestId,
    url: endpoint.url,
    response_status: result.statusCode,
    latency_ms: latency,
    outcome:
      answer.kind === 'approved'
        ? answer.amount === null
          ? 'approved'
          : 'partially_approved'
        : answer.kind,
    approved_amount: answer.kind === 'approved' ? (answer.amount ?? q.request.amount) : null,
    stand_in_reason: answer.kind === 'stand_in' ? answer.reason : null,
    error: answer.kind === 'stand_in' ? answer.error.slice(0, 500) : null,
    created_at: deps.clock.now(),
  }
  // Committed on its own, never in the transaction of a request sent with an Idempotency-Key.
  const logged = repo.insertAttempt(autonomousDb(deps), attempt).catch((err: unknown) => {
    deps.log.error(
      { err, authorization_id: attempt.authorization_id },
      'authorization endpoint attempt not logged',
    )
  })
  return { outcome, logged }
}
