import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { PurgeOptions } from '../../db/purge.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso, requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import {
  EVENT_CATALOGUE,
  EVENT_OBJECTS,
  EVENT_TYPES,
  eventScope,
  readsType,
  subscriptionRefusal,
  typesOfForm,
  type EventType,
  type ReadableTypes,
} from './catalog.js'
import * as repo from './repo.js'
import type { Event } from './schemas.js'

export type EventView = Static<typeof Event>
export type { EventRow } from './repo.js'

/** Events are kept (readable, replayable) for 30 days, then purged. */
export const EVENT_RETENTION_MS = 30 * 24 * 60 * 60 * 1000

/** The REST shape of an event; also the exact body a webhook delivery carries. */
export function presentEvent(
  row: Pick<
    repo.EventRow,
    'id' | 'type' | 'api_version' | 'environment' | 'created_at' | 'data'
  > & {
    clock_id?: string | null
  },
): EventView {
  return {
    id: row.id,
    object: 'event',
    type: row.type as EventType,
    api_version: row.api_version,
    environment: row.environment as EventView['environment'],
    created_at: iso(row.created_at)!,
    // Only events of objects under a sandbox clock name it (docs/sandbox-clocks.md).
    ...(row.clock_id ? { clock_id: row.clock_id } : {}),
    // The details of its type (`data.threshold_pct`, …) sit beside the object, after it.
    data: { ...row.data, object: row.data.object },
  }
}

export function retentionStart(deps: AppDeps): Date {
  return new Date(deps.clock.now().getTime() - EVENT_RETENTION_MS)
}

/** What reading events of `type` takes: "a card: reading … requires the cards:read scope, as GET /v1/cards/… does". */
function scopeOf(type: EventType, them: 'it' | 'them'): string {
  const object = EVENT_CATALOGUE[type].object
  const article = /^[aeiou]/.test(object) ? 'an' : 'a'
  const route = EVENT_OBJECTS[object].retrieve
  return `${article} ${object}: reading ${them} requires the ${eventScope(type)} scope, as ${route} does.`
}

/** Refuses one event the caller does not read (`403 insufficient_scope`, naming the scope of its object). */
export function requireReadableEvent(readable: ReadableTypes, type: string): void {
  if (readsType(readable, type)) return
  throw new ApiError('insufficient_scope', {
    message: `This event carries ${scopeOf(type as EventType, 'it')}`,
  })
}

/**
 * Refuses a filter (`param`: the list's `type`, the stream's `types`) naming events the caller does not read:
 * `403 insufficient_scope` naming the scope of their object, as that object's own GET route refuses a token without it.
 */
export function requireReadableForms(
  readable: ReadableTypes,
  forms: readonly string[],
  param: string,
): void {
  for (const form of forms) {
    const hidden = typesOfForm(form)?.find((t) => !readsType(readable, t))
    if (!hidden) continue
    const message = `Events of type ${form} carry ${scopeOf(hidden, 'them')}`
    throw new ApiError('insufficient_scope', { param, message })
  }
}

/**
 * One retained event of the caller. Another organization's answers as a missing one; an event whose object the
 * caller's scopes do not read answers `403 insufficient_scope` (`readable`: the types it reads).
 */
export async function getEvent(
  deps: AppDeps,
  ctx: RequestCtx,
  readable: ReadableTypes,
  id: string,
): Promise<EventView> {
  const row = isId('evt', id) ? await repo.findEvent(deps.db, id) : undefined
  const owned = requireOwned(row, ctx, 'event_not_found')
  if (owned.created_at.getTime() < retentionStart(deps).getTime())
    throw new ApiError('event_not_found')
  requireReadableEvent(readable, owned.type)
  return presentEvent(owned)
}

/** An event row by id whatever its owner (operator replay); undefined when missing or purged. */
export async function findEventForReplay(
  deps: AppDeps,
  id: string,
): Promise<repo.EventRow | undefined> {
  if (!isId('evt', id)) return undefined
  const row = await repo.findEvent(deps.db, id)
  return row && row.created_at.getTime() >= retentionStart(deps).getTime() ? row : undefined
}

/** Whether text starts with a date that exists (JavaScript would read 2026-02-30 as 2 March). */
function startsWithRealDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(value)
  if (!m) return false
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])]
  return (
    year >= 1000 &&
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= new Date(Date.UTC(year, month, 0)).getUTCDate()
  )
}

function parseBound(value: string | undefined, param: string): Date | undefined {
  if (value === undefined) return undefined
  const unix = /^\d{1,12}$/.test(value)
  const date = unix ? new Date(Number(value) * 1000) : new Date(value)
  if (Number.isNaN(date.getTime()) || !(unix || startsWithRealDate(value))) {
    throw new ApiError('invalid_parameter', {
      param,
      message: `${param} must be an ISO 8601 timestamp or Unix seconds.`,
    })
  }
  return date
}

export interface EventListParams extends PageParams {
  type?: string
  'created[gte]'?: string
  'created[gt]'?: string
  'created[lte]'?: string
  'created[lt]'?: string
}

/**
 * The caller's events, newest first, optionally by type and creation time: only the types it reads (`readable`). A
 * `type` filter naming types it does not read answers `403 insufficient_scope`; without one (or with `*`) the others
 * are left out, read past when they are few, else each readable type read as its own index range (`repo.listEvents`).
 */
export async function listEvents(
  deps: AppDeps,
  ctx: RequestCtx,
  readable: ReadableTypes,
  query: EventListParams,
): Promise<ListResult<EventView>> {
  const filter: repo.EventFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    retainedSince: retentionStart(deps),
    gte: parseBound(query['created[gte]'], 'created[gte]'),
    gt: parseBound(query['created[gt]'], 'created[gt]'),
    lte: parseBound(query['created[lte]'], 'created[lte]'),
    lt: parseBound(query['created[lt]'], 'created[lt]'),
  }
  if (query.type !== undefined) {
    // The forms a subscription accepts: `*` (no filter), `<prefix>.*` and exact types; anything else names the catalogue.
    const refusal = subscriptionRefusal(query.type, deps.config.baseUrl)
    if (refusal !== null)
      throw new ApiError('invalid_parameter', { param: 'type', message: refusal })
    requireReadableForms(readable, [query.type], 'type')
    filter.types = typesOfForm(query.type) ?? undefined
  }
  if (filter.types === undefined && readable !== 'every') {
    filter.types = readable
    filter.unreadable = EVENT_TYPES.filter((t) => !readsType(readable, t))
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/events',
    page: query,
    sortKey: (r: repo.EventRow) => r.id,
    fetch: (bounds) => repo.listEvents(deps.db, filter, bounds),
    present: presentEvent,
  })
}

/**
 * Deletes events past retention with their webhook deliveries and attempts (the delivery log and replays read
 * nothing older); run by the `events.purge` schedule. Answers how many events went.
 */
export async function purgeExpiredEvents(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgeEventsBefore(deps.db, retentionStart(deps), options)
}
