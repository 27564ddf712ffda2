import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { OPERATOR_CTX, paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { subscribes, eventIdsSince, findEventForReplay, retentionStart, queueDeliveries } from '../events/index.js'
import * as deliveries from './delivery-repo.js'
import * as repo from './repo.js'

export interface ReplayView {
  object: 'webhook_replay'
  event_id: string | null
  webhook_endpoint_ids: string[]
  since: string | null
  queued: number
}

export interface AttemptView {
  object: 'webhook_delivery_attempt'
  id: string
  event_id: string
  event_type: string
  webhook_endpoint_id: string
  attempt: number
  url: string
  succeeded: boolean
  status_code: number | null
  duration_ms: number
  error: string | null
  response_body: string | null
  created_at: string
}

export function presentAttempt(row: deliveries.AttemptRow): AttemptView {
  return {
    object: 'webhook_delivery_attempt',
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    webhook_endpoint_id: row.endpoint_id,
    attempt: row.attempt,
    url: row.url,
    succeeded: row.succeeded,
    status_code: row.status_code,
    duration_ms: row.duration_ms,
    error: row.error,
    response_body: row.response_body,
    created_at: iso(row.created_at)!,
  }
}

async function endpointForReplay(deps: AppDeps, id: string): Promise<repo.EndpointRow> {
  const ep = isId('whe', id) ? await repo.findEndpoint(deps.db, id) : undefined
  if (!ep) throw new ApiError('webhook_endpoint_not_found')
  if (ep.status !== 'enabled') {
    throw new ApiError('invalid_parameter', { param: 'webhook_endpoint_id', message: 'The endpoint is disabled; enable it (PATCH status "enabled") before replaying.' })
  }
  return ep
}

/** Re-sends one stored event (to one endpoint, or to every enabled endpoint subscribed to its type) with a new attempt number. */
export async function replayEvent(deps: AppDeps, eventId: string, endpointId?: string): Promise<ReplayView> {
  const event = await findEventForReplay(deps, eventId)
  if (!event) throw new ApiError('event_not_found')
  let targets: repo.EndpointRow[]
  if (endpointId !== undefined) {
    const ep = await endpointForReplay(deps, endpointId)
    if (ep.organization_id !== event.organization_id || ep.environment !== event.environment) throw new ApiError('webhook_endpoint_not_found')
    targets = [ep]
  } else {
    targets = (await repo.enabledEndpoints(deps.db, event.organization_id, event.environment)).filter((e) => subscribes(e.enabled_events, event.type))
  }
  const scope = { organizationId: event.organization_id, environment: event.environment }
  await withTx(deps.db, (trx) => queueDeliveries(trx, scope, targets.map((t) => ({ eventId: event.id, endpointId: t.id })), deps.clock.now()))
  return { object: 'webhook_replay', event_id: event.id, webhook_endpoint_ids: targets.map((t) => t.id), since: null, queued: targets.length }
}

/** Re-sends every retained event the endpoint subscribes to, created at or after `since`, whether or not it was delivered. */
export async function replayEndpoint(deps: AppDeps, endpointId: string, since: Date): Promise<ReplayView> {
  const ep = await endpointForReplay(deps, endpointId)
  const retained = retentionStart(deps)
  const from = since.getTime() < retained.getTime() ? retained : since
  const scope = { organizationId: ep.organization_id, environment: ep.environment }
  let after: string | null = null
  let queued = 0
  for (;;) {
    const rows = await eventIdsSince(deps.db, scope, from, ep.enabled_events, after, 500)
    if (rows.length === 0) break
    await withTx(deps.db, (trx) => queueDeliveries(trx, scope, rows.map((r) => ({ eventId: r.id, endpointId: ep.id })), deps.clock.now()))
    queued += rows.length
    after = rows[rows.length - 1].id
    if (rows.length < 500) break
  }
  return { object: 'webhook_replay', event_id: null, webhook_endpoint_ids: [ep.id], since: iso(from), queued }
}

/** Operator lists have no tenant; their cursors are bound to this pseudo-caller and the list path. */

/** Delivery attempts of one event or one endpoint, newest first. */
export async function listAttempts(deps: AppDeps, by: { eventId?: string; endpointId?: string }, url: string, page: PageParams): Promise<ListResult<AttemptView>> {
  return paginate({
    ctx: OPERATOR_CTX, cursors: deps.cursors, url, page,
    sortKey: (r: deliveries.AttemptRow) => r.id,
    fetch: (bounds) => deliveries.listAttempts(deps.db, by, bounds),
    present: presentAttempt,
  })
}
