import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import { signalJobsQueued } from '../../jobs/wakeup.js'
import { deliveriesWithin } from '../webhooks/outbox.js'
import './types.js'

export const EVENT_API_VERSION = '2026-11-01'

/** Whose event it is: the organization and environment the change happened in. */
export interface EventScope {
  organizationId: string
  environment: string
}

/**
 * Records that something happened: call it with the transaction that made the change, so a rolled-back
 * change emits nothing (transactional outbox). `object` is the full object in its REST shape.
 * In the same statement it queues one delivery per enabled endpoint subscribed to `type`. Returns the event id.
 */
export async function emit(trx: Db, scope: EventScope, type: string, object: Record<string, unknown>, now: Date = new Date()): Promise<string> {
  const event = eventWrites(scope, type, sql`${JSON.stringify({ object })}::json`, now, null)
  const { rows } = await sql<{ notified: number }>`WITH ${event.ctes} SELECT ${event.notified} AS notified`.execute(trx)
  if (rows[0].notified) signalJobsQueued()
  return event.id
}

export interface EventWithin {
  /** The event's id (written only when the source row exists). */
  id: string
  /** Common table expressions to place after the one named `source`: the event and its deliveries. */
  ctes: RawBuilder<unknown>
  /** A column for the final SELECT: 1 when deliveries were queued (call `signalJobsQueued` then), else 0. */
  notified: RawBuilder<number>
}

/**
 * `emit` inside the statement that makes the change, for hot paths that then need no explicit
 * transaction: the event is written from the row of the CTE `source` (one event when it returned a row,
 * none otherwise), its object built in SQL by `object` (a json expression over `source`'s columns that
 * must equal the REST presenter's output), and its deliveries queued in the same statement.
 */
export function emitWithin(scope: EventScope, type: string, source: string, object: RawBuilder<unknown>, now: Date): EventWithin {
  return eventWrites(scope, type, sql`json_build_object('object', ${object})`, now, source)
}

/**
 * One event per row of the CTE `source`, for statements that change many rows at once (batched ledger
 * adjustments): each row names its event's id, scope and type in the columns given, and `object` builds its
 * REST shape from the row, as with `emitWithin`. Deliveries are queued in the same statement.
 */
export function emitPerRow(source: string, columns: { id: string; organizationId: string; environment: string; type: string }, object: RawBuilder<unknown>, now: Date): Omit<EventWithin, 'id'> {
  return eventCtes({ id: sql.ref(columns.id), organizationId: sql.ref(columns.organizationId), environment: sql.ref(columns.environment), type: sql.ref(columns.type) },
    sql`json_build_object('object', ${object})`, now, sql`FROM ${sql.table(source)}`)
}

/** The event (`data` a json expression; one row, or one per row of the CTE `source`) and its deliveries, as CTEs. */
function eventWrites(scope: EventScope, type: string, data: RawBuilder<unknown>, now: Date, source: string | null): EventWithin {
  const id = newId('evt')
  const from = source === null ? sql`` : sql`FROM ${sql.table(source)}`
  return { id, ...eventCtes({ id: sql`${id}`, organizationId: sql`${scope.organizationId}`, environment: sql`${scope.environment}`, type: sql`${type}` }, data, now, from) }
}

type EventColumns = Record<'id' | 'organizationId' | 'environment' | 'type', RawBuilder<unknown> | ReturnType<typeof sql.ref>>

/** `ev`: the events (each column an expression over `from`), then their deliveries (`deliveriesWithin`). */
function eventCtes(c: EventColumns, data: RawBuilder<unknown>, now: Date, from: RawBuilder<unknown>): Omit<EventWithin, 'id'> {
  const deliveries = deliveriesWithin('ev', now)
  const ctes = sql`ev AS (
      INSERT INTO events (id, organization_id, environment, type, api_version, data, created_at)
      SELECT ${c.id}, ${c.organizationId}, ${c.environment}, ${c.type}, ${EVENT_API_VERSION}, ${data}, ${now}::timestamptz
      ${from}
      RETURNING id, organization_id, environment, type
    ), ${deliveries.ctes}`
  return { ctes, notified: deliveries.notified }
}
