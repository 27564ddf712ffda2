import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import type { DueOnClock } from '../clocks/index.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import { ALERT_LIMITS } from './schemas.js'
import './types.js'

/** What the validity check found for one eSIM. */
export interface ValidityOutcome {
  id: string
  /** Its validity has ended: announced now (`esim.expired`). */
  expired: boolean
  /** The warnings due now, in hours (each announced once for this validity end). */
  due_hours: number[]
  /** Whole hours left, rounded up. */
  hours_left: number
}

/**
 * What falls due at or before `until` on the eSIMs of these cardholders (a sandbox clock's), earliest first: each unsent
 * warning (`valid_until` less its hours, not before the eSIM was made) and the end of the validity, one entry each, so
 * that an advance runs them in time order among other eSIMs' (a run at a warning's time sends what is due then).
 * Each is keyed by its eSIM's cardholder: the advance takes a cardholder's in one transaction.
 */
export async function dueOfCardholders(
  db: Db,
  cardholderIds: readonly string[],
  defaults: readonly number[],
  until: Date,
  limit: number,
): Promise<DueOnClock[]> {
  if (cardholderIds.length === 0) return []
  const { rows } = await sql<{ id: string; at: Date | string; key: string }>`
    WITH e AS MATERIALIZED (
      SELECT e.id, e.cardholder_id, e.valid_until, e.created_at, e.validity_warned_hours, ${hoursOf(defaults)} AS hours
      FROM esims AS e
      LEFT JOIN esim_alert_settings AS s ON s.organization_id = e.organization_id AND s.environment = e.environment
      WHERE e.cardholder_id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(cardholderIds)}::json)))
        AND e.expired_at IS NULL AND e.status <> 'canceled' AND e.valid_until IS NOT NULL
    )
    SELECT id, at, key FROM (
      SELECT e.id, e.valid_until AS at, e.cardholder_id AS key FROM e
      UNION ALL
      SELECT e.id, GREATEST(e.valid_until - make_interval(hours => h), e.created_at) AS at, e.cardholder_id
      FROM e CROSS JOIN LATERAL unnest(e.hours) AS h WHERE NOT h = ANY(e.validity_warned_hours)
    ) AS d
    WHERE at <= ${until}
    ORDER BY at, id
    LIMIT ${limit}`.execute(db)
  return rows.map((r) => ({ id: r.id, at: new Date(r.at), key: r.key }))
}

const hoursOf = (defaults: readonly number[]) =>
  sql`COALESCE(e.validity_warning_hours, s.validity_warning_hours, ${sql.val([...defaults])}::int[])`

/**
 * The next eSIMs, in id order after `after`, whose validity has ended unannounced or that have a warning due, under
 * their row locks (eSIMs another transaction holds are skipped: the next run takes them). Only the index range of
 * validity ends within the longest warning is read. `only`: these eSIMs alone.
 */
export async function lockDue(
  trx: Db,
  defaults: readonly number[],
  now: Date,
  options: { after: string; limit: number; only?: readonly string[] },
): Promise<string[]> {
  const horizon = new Date(now.getTime() + ALERT_LIMITS.maxHours * 3_600_000)
  const { rows } = await sql<{ id: string }>`
    SELECT e.id FROM esims AS e
    LEFT JOIN esim_alert_settings AS s ON s.organization_id = e.organization_id AND s.environment = e.environment
    WHERE e.expired_at IS NULL AND e.valid_until <= ${horizon} AND e.id > ${options.after}
      AND e.status <> 'canceled'
      ${
        options.only
          ? sql`AND e.id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(options.only)}::json)))`
          : // The sweep: eSIMs under a sandbox clock are announced by the clock's advance, on its time.
            sql`AND (e.cardholder_id IS NULL OR ${clockOfCardholderSql(sql.ref('e.cardholder_id'))} IS NULL)`
      }
      AND (e.valid_until <= ${now} OR EXISTS (
        SELECT 1 FROM unnest(${hoursOf(defaults)}) AS h
        WHERE e.valid_until <= ${now}::timestamptz + make_interval(hours => h) AND NOT h = ANY(e.validity_warned_hours)))
    ORDER BY e.id
    LIMIT ${options.limit}
    FOR UPDATE OF e SKIP LOCKED`.execute(trx)
  return rows.map((r) => r.id)
}

/**
 * For eSIMs `lockDue` locked, in one statement: the running packages past their expiry become `expired`, an eSIM whose
 * validity has ended is marked announced, and the warnings now due are recorded as sent.
 */
export async function applyValidity(
  trx: Db,
  esimIds: readonly string[],
  defaults: readonly number[],
  now: Date,
): Promise<ValidityOutcome[]> {
  if (esimIds.length === 0) return []
  const { rows } = await sql<ValidityOutcome>`
    WITH e AS MATERIALIZED (
      SELECT e.id, e.valid_until, e.validity_warned_hours, ${hoursOf(defaults)} AS hours
      FROM esims AS e
      LEFT JOIN esim_alert_settings AS s ON s.organization_id = e.organization_id AND s.environment = e.environment
      WHERE e.id = ANY(ARRAY(SELECT json_array_elements_text(${JSON.stringify(esimIds)}::json))) AND e.expired_at IS NULL
    ),
    calc AS MATERIALIZED (
      SELECT e.id, e.valid_until <= ${now} AS expired,
        ARRAY(SELECT h FROM unnest(e.hours) AS h
          WHERE e.valid_until <= ${now}::timestamptz + make_interval(hours => h) AND NOT h = ANY(e.validity_warned_hours)
          ORDER BY h DESC) AS due_hours,
        GREATEST(0, ceil(extract(epoch FROM (e.valid_until - ${now}::timestamptz)) / 3600))::int AS hours_left
      FROM e
    ),
    bx AS (
      UPDATE esim_bundles SET status = 'expired', updated_at = ${now}
      WHERE esim_id IN (SELECT id FROM calc WHERE expired) AND status = 'running' AND expires_at <= ${now}
    ),
    ux AS (
      UPDATE esims AS x SET expired_at = CASE WHEN c.expired THEN ${now}::timestamptz ELSE x.expired_at END,
        validity_warned_hours = x.validity_warned_hours || c.due_hours,
        updated_at = CASE WHEN c.expired THEN ${now}::timestamptz ELSE x.updated_at END
      FROM calc AS c WHERE x.id = c.id AND (c.expired OR cardinality(c.due_hours) > 0)
    )
    SELECT id, expired, due_hours, hours_left FROM calc WHERE expired OR cardinality(due_hours) > 0 ORDER BY id`.execute(
    trx,
  )
  return rows
}
