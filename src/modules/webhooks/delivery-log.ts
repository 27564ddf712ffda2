import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso, requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { findEvent, retentionStart, subscriptionRefusal, typesOfForm } from '../events/index.js'
import * as deliveries from './delivery-repo.js'
import type { WebhookDelivery } from './schemas.js'
import { ownedEndpoint } from './service.js'

export type DeliveryView = Static<typeof WebhookDelivery>

type DeliveryWithAttempts = deliveries.DeliveryRow & { attempt_rows: deliveries.AttemptRow[] }

/**
 * The REST shape of one delivery with every recorded attempt, oldest first. A delivery closed unsent because its
 * endpoint was disabled or deleted (`canceled` in the table) is `failed`: it will not be tried again unless replayed.
 */
export function presentDelivery(row: DeliveryWithAttempts): DeliveryView {
  return {
    id: row.id,
    object: 'webhook_delivery',
    webhook_endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status === 'canceled' ? 'failed' : row.status,
    attempts: row.attempt_rows.map((a) => ({
      attempt: a.attempt,
      started_at: iso(a.started_at)!,
      duration_ms: a.duration_ms,
      response_status: a.status_code,
      error: a.error,
      response_body: a.response_body,
    })),
    next_attempt_at: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    delivered_at: iso(row.delivered_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}

export interface DeliveryListParams extends PageParams {
  status?: 'pending' | 'delivered' | 'failed'
  event_type?: string
}

/** `GET /v1/webhook_endpoints/{id}/deliveries`: the caller's endpoint's deliveries, newest first, each with its attempts. */
export async function listEndpointDeliveries(
  deps: AppDeps,
  ctx: RequestCtx,
  endpointId: string,
  query: DeliveryListParams,
): Promise<ListResult<DeliveryView>> {
  const ep = await ownedEndpoint(deps, ctx, endpointId)
  const filter: deliveries.DeliveryLogFilter = { status: query.status }
  if (query.event_type !== undefined) {
    const refusal = subscriptionRefusal(query.event_type, deps.config.baseUrl)
    if (refusal !== null)
      throw new ApiError('invalid_parameter', { param: 'event_type', message: refusal })
    filter.eventTypes = typesOfForm(query.event_type) ?? undefined
  }
  // Each filter has its index ((endpoint, status, id) and (endpoint, event type, id)); both at once would walk one
  // of them past every row the other rejects, on an endpoint that receives every event of the organization.
  if (filter.status !== undefined && filter.eventTypes !== undefined) {
    throw new ApiError('invalid_parameter', {
      param: 'event_type',
      message:
        'status and event_type cannot be combined: filter the delivery log by one of them (event_type=* with a status is accepted).',
    })
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: `/v1/webhook_endpoints/${ep.id}/deliveries`,
    page: query,
    sortKey: (r: DeliveryWithAttempts) => r.id,
    fetch: async (bounds) => {
      const rows = await deliveries.listDeliveries(deps.db, ep.id, filter, bounds)
      const attempts = await deliveries.attemptsOfDeliveries(
        deps.db,
        ep.id,
        rows.map((r) => r.event_id),
      )
      const byEvent = new Map<string, deliveries.AttemptRow[]>()
      for (const a of attempts) byEvent.set(a.event_id, [...(byEvent.get(a.event_id) ?? []), a])
      return rows.map((r) => ({ ...r, attempt_rows: byEvent.get(r.event_id) ?? [] }))
    },
    present: presentDelivery,
  })
}

/**
 * One event's deliveries, one per endpoint it was sent (or is to be sent) to, each with its attempts: the caller's
 * retained event only (another organization's, or one past retention, answers event_not_found).
 */
export async function eventDeliveries(
  deps: AppDeps,
  ctx: RequestCtx,
  eventId: string,
): Promise<DeliveryView[]> {
  const found = isId('evt', eventId) ? await findEvent(deps.db, eventId) : undefined
  const event = requireOwned(found, ctx, 'event_not_found')
  if (event.created_at.getTime() < retentionStart(deps).getTime())
    throw new ApiError('event_not_found')
  const [rows, attempts] = await Promise.all([
    deliveries.deliveriesOfEvent(deps.db, event.id),
    deliveries.attemptsOfEvent(deps.db, event.id),
  ])
  const byEndpoint = new Map<string, deliveries.AttemptRow[]>()
  for (const a of attempts)
    byEndpoint.set(a.endpoint_id, [...(byEndpoint.get(a.endpoint_id) ?? []), a])
  return rows.map((r) =>
    presentDelivery({ ...r, attempt_rows: byEndpoint.get(r.endpoint_id) ?? [] }),
  )
}
