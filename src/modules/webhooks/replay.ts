import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso, requireOwned } from '../../http/ownership.js'
import { OPERATOR_CTX, paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import {
  deliveredToNamedEndpoint,
  emit,
  EVENT_API_VERSION,
  EVENT_RETENTION_MS,
  eventIdsSince,
  findEvent,
  findEventForReplay,
  presentEvent,
  queueDeliveries,
  requireReadableEvent,
  retentionStart,
  subscribes,
  type EventRow,
  type EventView,
  type ReadableTypes,
} from '../events/index.js'
import * as deliveries from './delivery-repo.js'
import * as repo from './repo.js'
import type { Replay } from './schemas.js'
import { ownedEndpoint, presentEndpoint } from './service.js'

export type ReplayView = Static<typeof Replay>

/** An attempt as the operator API shows it: the stored row, its endpoint as `webhook_endpoint_id`, its time in ISO. */
export type AttemptView = { object: 'webhook_delivery_attempt' } & Pick<
  deliveries.AttemptRow,
  AttemptField
> & {
    webhook_endpoint_id: string
    created_at: string
  }
type AttemptField =
  | 'id'
  | 'event_id'
  | 'event_type'
  | 'attempt'
  | 'url'
  | 'succeeded'
  | 'status_code'
  | 'duration_ms'
  | 'error'
  | 'response_body'

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

/** Replays and test events go only to an enabled endpoint: a disabled one would close the delivery unsent. */
function requireEnabled(ep: repo.EndpointRow, param: string): repo.EndpointRow {
  if (ep.status !== 'enabled') {
    throw new ApiError('invalid_parameter', {
      param,
      message:
        'The endpoint is disabled; enable it (PATCH status "enabled") before replaying or testing.',
    })
  }
  return ep
}

async function endpointForReplay(deps: AppDeps, id: string): Promise<repo.EndpointRow> {
  const ep = isId('whe', id) ? await repo.findEndpoint(deps.db, id) : undefined
  if (!ep) throw new ApiError('webhook_endpoint_not_found')
  return requireEnabled(ep, 'webhook_endpoint_id')
}

/**
 * Where a replay of `event` goes: the endpoint named (`named`, already checked to be the event's scope's), or every
 * enabled endpoint of the scope whose list takes its type. An event delivered only to the endpoint it carries
 * (`webhook_endpoint.test`) goes to that endpoint alone: naming another is refused.
 */
async function replayTargets(
  deps: AppDeps,
  event: EventRow,
  named: repo.EndpointRow | undefined,
): Promise<repo.EndpointRow[]> {
  if (deliveredToNamedEndpoint(event.type)) {
    const own = String((event.data.object as { id?: unknown }).id ?? '')
    if (named) {
      if (named.id !== own) {
        throw new ApiError('invalid_parameter', {
          param: 'webhook_endpoint_id',
          message: `A ${event.type} event is delivered only to the endpoint it tests (${own}).`,
        })
      }
      return [named]
    }
    const ep = isId('whe', own) ? await repo.findEndpoint(deps.db, own) : undefined
    const sameScope =
      ep && ep.organization_id === event.organization_id && ep.environment === event.environment
    return sameScope && ep.status === 'enabled' ? [ep] : []
  }
  if (named) return [named]
  return (await repo.enabledEndpoints(deps.db, event.organization_id, event.environment)).filter(
    (e) => subscribes(e.enabled_events, event.type),
  )
}

async function queueReplay(
  deps: AppDeps,
  event: EventRow,
  targets: repo.EndpointRow[],
  inSameTx?: InSameTx<ReplayView>,
): Promise<ReplayView> {
  const scope = scopeOfRow(event)
  const replay: ReplayView = {
    object: 'replay',
    queued: targets.length,
    event_id: event.id,
    webhook_endpoint_ids: targets.map((t) => t.id),
    since: null,
  }
  await withTx(deps.db, async (trx) => {
    await queueDeliveries(
      trx,
      scope,
      targets.map((t) => ({ eventId: event.id, endpointId: t.id })),
      deps.clock.now(),
    )
    await inSameTx?.(trx, replay)
  })
  return replay
}

/** Operator: re-sends one stored event (to one endpoint, or to every enabled endpoint subscribed to its type) with a new attempt number. */
export async function replayEvent(
  deps: AppDeps,
  eventId: string,
  endpointId?: string,
): Promise<ReplayView> {
  const event = await findEventForReplay(deps, eventId)
  if (!event) throw new ApiError('event_not_found')
  let named: repo.EndpointRow | undefined
  if (endpointId !== undefined) {
    named = await endpointForReplay(deps, endpointId)
    if (named.organization_id !== event.organization_id || named.environment !== event.environment)
      throw new ApiError('webhook_endpoint_not_found')
  }
  return queueReplay(deps, event, await replayTargets(deps, event, named))
}

/**
 * `POST /v1/events/{id}/replay`: the caller's own retained event, to its own endpoint (enabled, of the token's
 * environment) or to every enabled endpoint subscribed to the type, with a new attempt number; an event the caller
 * does not read (`readable`: the types its scopes read) is refused as reading it is. `inSameTx` runs in the
 * transaction that queues the deliveries (the console's audit row).
 */
export async function replayOwnEvent(
  deps: AppDeps,
  ctx: RequestCtx,
  readable: ReadableTypes,
  eventId: string,
  endpointId?: string,
  inSameTx?: InSameTx<ReplayView>,
): Promise<ReplayView> {
  const found = isId('evt', eventId) ? await findEvent(deps.db, eventId) : undefined
  const event = requireOwned(found, ctx, 'event_not_found')
  if (event.created_at.getTime() < retentionStart(deps).getTime())
    throw new ApiError('event_not_found')
  requireReadableEvent(readable, event.type)
  let named: repo.EndpointRow | undefined
  if (endpointId !== undefined) {
    const row = isId('whe', endpointId) ? await repo.findEndpoint(deps.db, endpointId) : undefined
    named = requireEnabled(
      requireOwned(row, ctx, 'webhook_endpoint_not_found', 'webhook_endpoint_id'),
      'webhook_endpoint_id',
    )
  }
  return queueReplay(deps, event, await replayTargets(deps, event, named), inSameTx)
}

/**
 * Re-sends every retained event the endpoint takes, created at or after `since` (clamped to retention), whether or not
 * it was delivered; of the types `readable` only (the caller's).
 */
async function replayEndpointSince(
  deps: AppDeps,
  ep: repo.EndpointRow,
  since: Date,
  readable: ReadableTypes,
): Promise<ReplayView> {
  const retained = retentionStart(deps)
  const from = since.getTime() < retained.getTime() ? retained : since
  const scope = scopeOfRow(ep)
  let after: string | null = null
  let queued = 0
  for (;;) {
    const endpoint = { id: ep.id, enabledEvents: ep.enabled_events }
    const rows = await eventIdsSince(deps.db, scope, from, endpoint, readable, after, 500)
    if (rows.length === 0) break
    await withTx(deps.db, (trx) =>
      queueDeliveries(
        trx,
        scope,
        rows.map((r) => ({ eventId: r.id, endpointId: ep.id })),
        deps.clock.now(),
      ),
    )
    queued += rows.length
    after = rows[rows.length - 1].id
    if (rows.length < 500) break
  }
  return {
    object: 'replay',
    queued,
    event_id: null,
    webhook_endpoint_ids: [ep.id],
    since: iso(from),
  }
}

/** Operator: an endpoint's events since a time (any organization's endpoint; `since` before retention starts at retention). */
export async function replayEndpoint(
  deps: AppDeps,
  endpointId: string,
  since: Date,
): Promise<ReplayView> {
  return replayEndpointSince(deps, await endpointForReplay(deps, endpointId), since, 'every')
}

/**
 * `POST /v1/webhook_endpoints/{id}/replay`: the caller's own enabled endpoint gets every retained event its
 * `enabled_events` takes (and its own test events) created at or after `since`, which must lie within retention; of
 * the types the caller reads (`readable`), so a replay sends no event its token could not read.
 */
export async function replayOwnEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  readable: ReadableTypes,
  endpointId: string,
  since: string,
): Promise<ReplayView> {
  const ep = requireEnabled(await ownedEndpoint(deps, ctx, endpointId), 'webhook_endpoint_id')
  const from = new Date(since)
  const retained = retentionStart(deps)
  if (from.getTime() < retained.getTime()) {
    throw new ApiError('invalid_parameter', {
      param: 'since',
      message: `since must lie within the ${EVENT_RETENTION_MS / 86_400_000}-day event retention: at or after ${retained.toISOString()}.`,
    })
  }
  return replayEndpointSince(deps, ep, from, readable)
}

/**
 * `POST /v1/webhook_endpoints/{id}/test`: records a `webhook_endpoint.test` event carrying the endpoint and queues
 * its delivery to that endpoint alone, in one transaction (the type fans out to no subscriber). Answers the event.
 */
export async function sendTestEvent(
  deps: AppDeps,
  ctx: RequestCtx,
  endpointId: string,
  inSameTx?: InSameTx<string>,
): Promise<EventView> {
  const ep = requireEnabled(await ownedEndpoint(deps, ctx, endpointId), 'webhook_endpoint_id')
  const now = deps.clock.now()
  const scope = scopeOfRow(ep)
  const object = presentEndpoint(ep)
  const id = await withTx(deps.db, async (trx) => {
    const eventId = await emit(trx, scope, 'webhook_endpoint.test', object, now)
    await queueDeliveries(trx, scope, [{ eventId, endpointId: ep.id }], now)
    await inSameTx?.(trx, eventId)
    return eventId
  })
  return presentEvent({
    id,
    type: 'webhook_endpoint.test',
    api_version: EVENT_API_VERSION,
    environment: ep.environment,
    created_at: now,
    data: { object },
  })
}

/** Operator lists have no tenant; their cursors are bound to this pseudo-caller and the list path. */

/** Delivery attempts of one event or one endpoint, newest first. */
export async function listAttempts(
  deps: AppDeps,
  by: { eventId?: string; endpointId?: string },
  url: string,
  page: PageParams,
): Promise<ListResult<AttemptView>> {
  return paginate({
    ctx: OPERATOR_CTX,
    cursors: deps.cursors,
    url,
    page,
    sortKey: (r: deliveries.AttemptRow) => r.id,
    fetch: (bounds) => deliveries.listAttempts(deps.db, by, bounds),
    present: presentAttempt,
  })
}
