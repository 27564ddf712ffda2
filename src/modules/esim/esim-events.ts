import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { signalJobsQueued } from '../../jobs/wakeup.js'
import { newId } from '../../lib/ids.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import { wallTime } from '../../lib/object-clock.js'
import {
  EVENT_ROW_COLUMNS,
  emitPerRow,
  type EventDetails,
  type EventType,
} from '../events/index.js'
import { esimSummaryJson } from './esim-json.js'

/** One event about an eSIM, carrying the eSIM as it is when the statement runs, and the details of its type. */
export interface EsimEvent {
  esimId: string
  type: EventType
  details?: EventDetails
}

/**
 * Writes many eSIM events in one statement (the sweeps and the batched usage path): each carries its eSIM in the
 * listing shape, built in SQL from the row as the caller's transaction left it, and its deliveries are queued in the
 * same statement. Ids are drawn in list order, so a report's events read in the order they are given. Each event
 * carries the sandbox clock of its eSIM's cardholder (`clock_id`, read in the statement); `clockId`, the clock the
 * caller's `now` is the time of (null: wall time), keeps the events' own time on wall time then.
 */
export async function emitEsimEvents(
  trx: Db,
  events: readonly EsimEvent[],
  objectNow: Date,
  clockId: string | null = null,
): Promise<void> {
  if (events.length === 0) return
  const now = wallTime(clockId, objectNow)
  // Grouped by eSIM: each eSIM's object is built once, however many events carry it.
  const byEsim = new Map<
    string,
    { event_id: string; event_type: string; event_details: unknown }[]
  >()
  for (const e of events) {
    const list = byEsim.get(e.esimId) ?? []
    list.push({ event_id: newId('evt', now), event_type: e.type, event_details: e.details ?? null })
    byEsim.set(e.esimId, list)
  }
  const items = JSON.stringify([...byEsim].map(([esim_id, list]) => ({ esim_id, events: list })))
  const written = emitPerRow(
    'src',
    { ...EVENT_ROW_COLUMNS, details: 'event_details' },
    sql.ref('obj'),
    now,
  )
  const { rows } = await sql<{ notified: number }>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${items}::json) AS i(esim_id text, events json)
    ),
    objs AS MATERIALIZED (
      SELECT e.organization_id, e.environment, ${esimSummaryJson('e', objectNow)} AS obj, i.events,
        ${clockOfCardholderSql(sql.ref('e.cardholder_id'))} AS clock_id
      FROM input AS i JOIN esims AS e ON e.id = i.esim_id AND e.id = ANY (ARRAY(SELECT esim_id FROM input))
    ),
    src AS (
      SELECT o.organization_id, o.environment, o.obj, o.clock_id, x.event_id, x.event_type, x.event_details
      FROM objs AS o CROSS JOIN LATERAL json_to_recordset(o.events) AS x(event_id text, event_type text, event_details json)
    ),
    ${written.ctes}
    SELECT ${written.notified} AS notified`.execute(trx)
  if (rows[0]?.notified) signalJobsQueued()
}
