import type { Selectable } from 'kysely'
import { sql, type RawBuilder } from 'kysely'
import { purgeInBatches, type PurgeOptions } from '../../db/purge.js'
import type { Db } from '../../db/types.js'
import { applyBounds, inIndexOrderPage, whereIn, type PageBounds } from '../../http/pagination.js'
import { lowestIdAt } from '../../lib/ids.js'
import { NAMED_ENDPOINT_TYPES, type ReadableTypes } from './catalog.js'
import type { EventScope } from './emit.js'
import { subscribedSql } from './outbox.js'
import type { EventsTable } from './types.js'

export type EventRow = Selectable<EventsTable>

/**
 * Events per purge statement: fewer than other purges' 2000 rows because each event takes its deliveries (one per
 * endpoint it went to) and their attempts with it, so a statement still removes a few thousand rows.
 */
export const EVENT_PURGE_BATCH = 500

export interface EventFilter {
  organizationId: string
  environment: string
  /** Oldest creation time still readable (the retention window). */
  retainedSince: Date
  /** The types taken: one exact type, every type of a prefix (`card.*`) or those the caller reads; undefined: all. */
  types?: readonly string[]
  /**
   * With `types` the types the caller reads (no type filter asked): the ones it does not. When they are the fewer, a
   * page first reads the scope's next events in list order and drops them (`SKIPPING_WINDOW`).
   */
  unreadable?: readonly string[]
  gte?: Date
  gt?: Date
  lte?: Date
  lt?: Date
}

/**
 * How far an event's id time may be from its `created_at`. Ids are made at the event's time (`newId('evt', now)`, in
 * the statement's batch for group-committed writes), so never earlier; later only when the process already made an id
 * at a later time, by milliseconds. Creation-time bounds are also applied to the id with this margin, so the index walk
 * starts and stops at the bound instead of filtering every event after (or before) it; `created_at` still decides
 * exactly which events are in. The margin covers events written before ids followed their time that closely.
 */
export const EVENT_ID_SKEW_MS = 1000

export async function findEvent(db: Db, id: string): Promise<EventRow | undefined> {
  return db.selectFrom('events').selectAll().where('id', '=', id).executeTakeFirst()
}

/** What a webhook delivery sends of its event, as `withDeliveryEvents` adds it to each row. */
export interface DeliveryEventFields {
  event_type: string
  api_version: string
  data: { object: Record<string, unknown> }
  event_created_at: Date
  clock_id: string | null
}

/**
 * The events module's read plan for webhook delivery claims: a query over `rows` (the name of a CTE or table
 * with an `event_id` column, in the caller's statement) answering each row with its event's fields beside it
 * (`DeliveryEventFields`), so a batch of claims reads its events in the statement that claims them. A row
 * whose event is gone (purged) is left out.
 */
export function withDeliveryEvents(rows: string): RawBuilder<unknown> {
  return sql`SELECT r.*, e.type AS event_type, e.api_version, e.data, e.created_at AS event_created_at,
      e.clock_id
    FROM ${sql.table(rows)} AS r JOIN events AS e ON e.id = r.event_id`
}

/** How many pages' worth of the scope's next events a page without a few unreadable types reads before the ranges. */
const SKIPPING_WINDOW = 2

/**
 * A page of the scope's events, newest first: `events_scope`, or `events_scope_type` one range per type taken
 * (merged); creation-time bounds also bound the id, so a window far from now is read from its own end. A caller that
 * reads all but a few types (`unreadable`) would pay a merge of dozens of ranges for every page, although those few
 * types are usually rare: its page first reads the next `SKIPPING_WINDOW` pages of the scope's events in order
 * (`events_scope`) and drops theirs; only when they crowd that window (too few others in it) are the ranges merged, so
 * no page reads more than that window beyond the merge.
 */
export async function listEvents(db: Db, f: EventFilter, bounds: PageBounds): Promise<EventRow[]> {
  const after = (at: Date) => lowestIdAt('evt', new Date(at.getTime() - EVENT_ID_SKEW_MS))
  const before = (at: Date) => lowestIdAt('evt', new Date(at.getTime() + EVENT_ID_SKEW_MS))
  let q = db
    .selectFrom('events')
    .selectAll()
    .where('organization_id', '=', f.organizationId)
    .where('environment', '=', f.environment)
    .where('created_at', '>=', f.retainedSince)
    .where('id', '>=', after(f.retainedSince))
  if (f.gte) q = q.where('created_at', '>=', f.gte).where('id', '>=', after(f.gte))
  if (f.gt) q = q.where('created_at', '>', f.gt).where('id', '>=', after(f.gt))
  if (f.lte)
    q = q.where('created_at', '<=', f.lte).where('id', '<', before(new Date(f.lte.getTime() + 1)))
  if (f.lt) q = q.where('created_at', '<', f.lt).where('id', '<', before(f.lt))
  const { unreadable } = f
  if (unreadable && f.types && unreadable.length < f.types.length) {
    const window = bounds.take * SKIPPING_WINDOW
    const next = await applyBounds(q, { ...bounds, take: window }, 'id', 'desc').execute()
    const kept = next.filter((r) => !unreadable.includes(r.type))
    if (kept.length >= bounds.take || next.length < window) return kept.slice(0, bounds.take)
  }
  return inIndexOrderPage(db, q, 'type', f.types, bounds)
}

/**
 * Event ids of one scope created since `since` that the endpoint `endpointId`, subscribed to `enabledEvents`, takes (as
 * new events' deliveries decide), oldest first, for replays: the types its list takes, and the events delivered only to a
 * named endpoint (`webhook_endpoint.test`) that name this one; of the types `readable` only (the replaying caller's).
 */
export async function eventIdsSince(
  db: Db,
  scope: EventScope,
  since: Date,
  endpoint: { id: string; enabledEvents: readonly string[] },
  readable: ReadableTypes,
  afterId: string | null,
  limit: number,
): Promise<{ id: string; type: string }[]> {
  let q = db
    .selectFrom('events')
    .select(['id', 'type'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('created_at', '>=', since)
  if (readable !== 'every')
    q = readable.length === 0 ? q.where(sql<boolean>`false`) : whereIn(q, 'type', readable)
  const named =
    NAMED_ENDPOINT_TYPES.length === 0
      ? sql<boolean>`false`
      : sql<boolean>`(type IN (${sql.join(NAMED_ENDPOINT_TYPES.map((t) => sql.lit(t)))}) AND data #>> '{object,id}' = ${endpoint.id})`
  q = q.where(
    sql<boolean>`(${subscribedSql(sql`${JSON.stringify(endpoint.enabledEvents)}::jsonb`, sql.ref('type'))} OR ${named})`,
  )
  if (afterId) q = q.where('id', '>', afterId)
  return q.orderBy('id', 'asc').limit(limit).execute()
}

/**
 * Deletes events created before `cutoff` in short batches; their webhook deliveries and delivery attempts go with
 * each event (ON DELETE CASCADE, through `webhook_deliveries`' primary key and `webhook_attempts_event`). Answers
 * how many events went.
 */
export async function purgeEventsBefore(
  db: Db,
  cutoff: Date,
  options?: PurgeOptions,
): Promise<number> {
  // Event ids sort by creation time and are made just after their created_at, so every event old enough is below
  // the lowest id of the cutoff: the primary key finds them (one made in the cutoff's very millisecond goes with
  // the next run).
  return purgeInBatches(db, {
    batch: EVENT_PURGE_BATCH,
    ...options,
    table: 'events',
    key: 'id',
    orderBy: 'id',
    where: sql`id < ${lowestIdAt('evt', cutoff)} AND created_at < ${cutoff}`,
  })
}

/**
 * The newest events (at most `limit`) of one scope whose object is `objectId`, created from `since` on (the object's
 * creation: no event about it is older): the console shows them beside the object. Newest first.
 */
export async function eventsAbout(
  db: Db,
  scope: { organizationId: string; environment: string },
  objectId: string,
  since: Date,
  limit = 20,
): Promise<EventRow[]> {
  return db
    .selectFrom('events')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('created_at', '>=', since)
    .where(sql<boolean>`data #>> '{object,id}' = ${objectId}`)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}

/** Events of one scope after an id, within retention, oldest first: the event stream's cursor read (`events_scope`). */
function eventsAfterQuery(
  db: Db,
  scope: EventScope,
  afterId: string,
  retainedSince: Date,
  limit: number,
) {
  return db
    .selectFrom('events')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('id', '>', afterId)
    .where('created_at', '>=', retainedSince)
    .orderBy('id', 'asc')
    .limit(limit)
}

/** Events of one scope after an id, oldest first, within retention (the event stream's cursor read). */
export async function eventsAfter(
  db: Db,
  scope: EventScope,
  afterId: string,
  retainedSince: Date,
  limit: number,
): Promise<EventRow[]> {
  return eventsAfterQuery(db, scope, afterId, retainedSince, limit).selectAll().execute()
}

/** The same read, ids and types only: a stream behind a full connection counts with it the events waiting for it. */
export async function eventTypesAfter(
  db: Db,
  scope: EventScope,
  afterId: string,
  retainedSince: Date,
  limit: number,
): Promise<{ id: string; type: string }[]> {
  return eventsAfterQuery(db, scope, afterId, retainedSince, limit).select(['id', 'type']).execute()
}
