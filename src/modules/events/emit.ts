import { sql, type RawBuilder } from 'kysely'
import type { Db } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import { wallTime } from '../../lib/object-clock.js'
import { signalJobsQueued } from '../../jobs/wakeup.js'
import { deliveriesWithin } from './outbox.js'
import type { EventType } from './catalog.js'
import './types.js'

export const EVENT_API_VERSION = '2026-11-01'

/** Whose event it is: the organization and environment the change happened in. */
export interface EventScope {
  organizationId: string
  environment: string
  /** The sandbox clock the object is under (docs/sandbox-clocks.md), when it is under one. */
  clockId?: string | null
}

/** What an event says beside its object (`data.threshold_pct` beside `data.object`): the catalogue's `details` of its type. */
export type EventDetails = Record<string, string | number | boolean | null | string[]>

/**
 * Records that something happened: call it with the transaction that made the change, so a rolled-back
 * change emits nothing (transactional outbox). `object` is the full object in its REST shape; `details`, when the
 * type has any, sit beside it in `data`. In the same statement it queues one delivery per enabled endpoint subscribed
 * to `type`. Returns the event id.
 */
export async function emit(
  trx: Db,
  scope: EventScope,
  type: EventType,
  object: Record<string, unknown>,
  now: Date = new Date(),
  details: EventDetails = {},
): Promise<string> {
  const data = JSON.stringify({ object, ...details })
  const event = eventWrites(scope, type, sql`${data}::json`, wallTime(scope.clockId, now))
  const { rows } = await sql<{
    notified: number
  }>`WITH ${event.ctes} SELECT ${event.notified} AS notified`.execute(trx)
  if (rows[0].notified) signalJobsQueued()
  return event.id
}

/** An event written inside the statement that makes the change: its common table expressions and the column that says whether deliveries were queued. */
export interface EventWithin {
  /** Common table expressions to place after the one named `source`: the events and their deliveries. */
  ctes: RawBuilder<unknown>
  /** A column for the final SELECT: 1 when deliveries were queued (call `signalJobsQueued` then), else 0. */
  notified: RawBuilder<number>
}

/** The columns `emitPerRow` reads of each row: an event's id, scope, type, details and sandbox clock. */
export interface EventRowColumns {
  id: string
  organizationId: string
  environment: string
  type: string
  details?: string
  /** A text column naming the sandbox clock of the row's object (null: none). */
  clockId?: string
}

/** The column names every caller of `emitPerRow` gives its rows (with `details` when it has some). */
export const EVENT_ROW_COLUMNS: EventRowColumns = {
  id: 'event_id',
  organizationId: 'organization_id',
  environment: 'environment',
  type: 'event_type',
  clockId: 'clock_id',
}

/**
 * `emit` inside the statement that makes the change, one event per row of the CTE `source`, for hot paths
 * that change many rows at once and need no explicit transaction (batched ledger adjustments and
 * authorization decisions): each row names its event's id, scope and type in the columns given, and `object`
 * builds its REST shape from the row (a json expression that must equal the REST presenter's output).
 * `columns.details`, when given, is a json column of the row whose keys go beside `object` in `data` (null or `{}`:
 * none), in their order. Deliveries are queued in the same statement.
 */
export function emitPerRow(
  source: string,
  columns: EventRowColumns,
  object: RawBuilder<unknown>,
  now: Date,
): EventWithin {
  return eventCtes(
    {
      id: sql.ref(columns.id),
      organizationId: sql.ref(columns.organizationId),
      environment: sql.ref(columns.environment),
      type: sql.ref(columns.type),
      ...(columns.clockId === undefined ? {} : { clockId: sql`${sql.ref(columns.clockId)}::text` }),
    },
    columns.details === undefined
      ? sql`json_build_object('object', ${object})`
      : dataWithDetails(object, sql.ref(columns.details)),
    now,
    sql`FROM ${sql.table(source)}`,
  )
}

/**
 * `{"object": …, <the keys of details>}` as json, keeping the object's key order (jsonb would sort them): the text of
 * `details` without its braces is spliced after the object.
 */
function dataWithDetails(
  object: RawBuilder<unknown>,
  details: RawBuilder<unknown>,
): RawBuilder<unknown> {
  return sql`(CASE WHEN ${details} IS NULL OR ${details}::text ~ '^\{\s*\}$' THEN json_build_object('object', ${object})
    ELSE ('{"object":' || (${object})::text || ',' || substr(${details}::text, 2, length(${details}::text) - 2) || '}')::json END)`
}

/** One event (`data` a json expression) and its deliveries, as CTEs. */
function eventWrites(
  scope: EventScope,
  type: EventType,
  data: RawBuilder<unknown>,
  now: Date,
): EventWithin & { id: string } {
  const id = newId('evt', now)
  return {
    id,
    ...eventCtes(
      {
        id: sql`${id}`,
        organizationId: sql`${scope.organizationId}`,
        environment: sql`${scope.environment}`,
        type: sql`${type}`,
        clockId: sql`${scope.clockId ?? null}::text`,
      },
      data,
      now,
      sql``,
    ),
  }
}

type EventColumns = Record<
  'id' | 'organizationId' | 'environment' | 'type',
  RawBuilder<unknown> | ReturnType<typeof sql.ref>
> & { clockId?: RawBuilder<unknown> | ReturnType<typeof sql.ref> }

/** `ev`: the events (each column an expression over `from`), then their deliveries (`deliveriesWithin`). */
function eventCtes(
  c: EventColumns,
  data: RawBuilder<unknown>,
  now: Date,
  from: RawBuilder<unknown>,
): EventWithin {
  const deliveries = deliveriesWithin('ev', now)
  const ctes = sql`ev AS (
      INSERT INTO events (id, organization_id, environment, type, api_version, data, created_at, clock_id)
      SELECT ${c.id}, ${c.organizationId}, ${c.environment}, ${c.type}, ${EVENT_API_VERSION}, ${data},
        ${now}::timestamptz, ${c.clockId ?? sql`NULL::text`}
      ${from}
      RETURNING id, organization_id, environment, type
    ), ${deliveries.ctes}`
  return { ctes, notified: deliveries.notified }
}
