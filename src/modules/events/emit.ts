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

/** The event (`data` a json expression; one row, or one per row of the CTE `source`) and its deliveries, as CTEs. */
function eventWrites(scope: EventScope, type: string, data: RawBuilder<unknown>, now: Date, source: string | null): EventWithin {
  const id = newId('evt')
  const deliveries = deliveriesWithin('ev', scope, type, now)
  const from = source === null ? sql`` : sql`FROM ${sql.table(source)}`
  const ctes = sql`ev AS (
      INSERT INTO events (id, organization_id, environment, type, api_version, data, created_at)
      SELECT ${id}, ${scope.organizationId}, ${scope.environment}, ${type}, ${EVENT_API_VERSION}, ${data}, ${now}::timestamptz
      ${from}
      RETURNING id
    ), ${deliveries.ctes}`
  return { id, ctes, notified: deliveries.notified }
}
