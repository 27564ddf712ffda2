import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import './types.js'

/** One usage report: the running total of data used on the eSIM's running package. */
export interface UsageInput {
  esimId: string
  used: number
  /** The reporter's scope: a report about another organization's eSIM finds nothing. */
  organizationId: string
  environment: string
}

/** What one report did (`applied` false: nothing was written for it, and the flags say why). */
export interface UsageOutcome {
  idx: number
  /** Null: no eSIM of this id in the reporter's scope. */
  esim_id: string | null
  /** The eSIM is suspended or canceled: no data flows. */
  inactive: boolean
  /** No package is running (all depleted or expired). */
  no_package: boolean
  /** Lower than what is already used on the running package (usage only grows). */
  lower: boolean
  applied: boolean
  /** The package the report counted on (its order id). */
  bundle_order_id: string | null
  data_mb: number | null
  before: number
  after: number
  /** Usage thresholds reached by this report, ascending, each announced once per package. */
  reached_pct: number[]
  installed_now: boolean
  first_use: boolean
  low_data: boolean
  depleted: boolean
}

const ids = (list: readonly string[]) =>
  sql`ARRAY(SELECT json_array_elements_text(${JSON.stringify(list)}::json))`

/**
 * Takes the eSIMs' row locks, in id order (two batches never wait on each other in a circle). Every writer of an eSIM's
 * packages holds its eSIM's lock first, so the statement after this one reads its packages as they now are: a crossing
 * is seen by exactly one report, however many arrive at once.
 */
export async function lockEsims(trx: Db, esimIds: readonly string[]): Promise<void> {
  if (esimIds.length === 0) return
  await sql`SELECT id FROM esims WHERE id = ANY(${ids(esimIds)}) ORDER BY id FOR UPDATE`.execute(
    trx,
  )
}

/**
 * Applies usage reports in one statement, under the locks `lockEsims` took (at most one report per eSIM): each counts
 * on its eSIM's running package (the oldest running one, capped at its volume), depletes it when used up, records the
 * usage thresholds it reaches (`alerted_pct`: each once per package), and marks the eSIM installed, switched on and
 * first used as the data says. A report that cannot apply writes nothing and says why.
 */
export async function applyUsageReports(
  trx: Db,
  reports: readonly UsageInput[],
  defaultThresholds: readonly number[],
  now: Date,
): Promise<UsageOutcome[]> {
  if (reports.length === 0) return []
  const items = JSON.stringify(
    reports.map((r, idx) => ({
      idx,
      esim_id: r.esimId,
      used: r.used,
      org: r.organizationId,
      env: r.environment,
    })),
  )
  const { rows } = await sql<UsageOutcome>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${items}::json) AS i(idx int, esim_id text, used int, org text, env text)
    ),
    -- Each report with its eSIM (by primary key) and the package it counts on (the eSIM's index, oldest running first).
    calc AS MATERIALIZED (
      SELECT i.idx, e.id AS esim_id, e.status IN ('suspended', 'canceled') AS inactive, c.order_id IS NULL AS no_package,
        coalesce(i.used < c.data_used_mb, false) AS lower, c.order_id AS bundle_order_id, c.data_mb,
        coalesce(c.data_used_mb, 0) AS before,
        CASE WHEN c.data_mb IS NULL THEN i.used ELSE LEAST(i.used, c.data_mb) END AS after,
        COALESCE(e.usage_thresholds_pct, s.usage_thresholds_pct, ${sql.val([...defaultThresholds])}::int[]) AS thresholds,
        coalesce(c.alerted_pct, '{}') AS alerted_pct, e.installed_at IS NULL AS installed_now,
        e.first_used_at IS NULL AS never_used
      FROM input AS i
      LEFT JOIN esims AS e ON e.id = i.esim_id AND e.organization_id = i.org AND e.environment = i.env
        AND e.id = ANY (ARRAY(SELECT esim_id FROM input))
      LEFT JOIN esim_alert_settings AS s ON s.organization_id = e.organization_id AND s.environment = e.environment
      LEFT JOIN LATERAL (
        SELECT b.order_id, b.data_mb, b.data_used_mb, b.alerted_pct FROM esim_bundles AS b
        WHERE b.esim_id = e.id AND b.status = 'running' AND (b.expires_at IS NULL OR b.expires_at > ${now})
        ORDER BY b.created_at, b.order_id LIMIT 1
      ) AS c ON true
    ),
    ok AS MATERIALIZED (
      SELECT calc.*,
        ARRAY(SELECT t FROM unnest(calc.thresholds) AS t
          WHERE calc.data_mb IS NOT NULL AND calc.after::bigint * 100 >= t::bigint * calc.data_mb AND NOT t = ANY(calc.alerted_pct)
          ORDER BY t) AS reached_pct,
        calc.data_mb IS NOT NULL AND calc.before::bigint * 10 < calc.data_mb::bigint * 8
          AND calc.after::bigint * 10 >= calc.data_mb::bigint * 8 AS low_data,
        calc.data_mb IS NOT NULL AND calc.after >= calc.data_mb AS depleted
      FROM calc WHERE calc.esim_id IS NOT NULL AND NOT calc.inactive AND NOT calc.no_package AND NOT calc.lower
    ),
    ub AS (
      UPDATE esim_bundles AS b SET data_used_mb = ok.after, alerted_pct = b.alerted_pct || ok.reached_pct,
        status = CASE WHEN ok.depleted THEN 'depleted' ELSE b.status END, updated_at = ${now}
      FROM ok WHERE b.order_id = ok.bundle_order_id AND b.order_id = ANY (ARRAY(SELECT bundle_order_id FROM ok))
    ),
    ue AS (
      UPDATE esims AS e SET status = CASE WHEN e.status IN ('released', 'installed') THEN 'enabled' ELSE e.status END,
        installed_at = coalesce(e.installed_at, ${now}),
        first_used_at = CASE WHEN e.first_used_at IS NULL AND ok.after > 0 THEN ${now}::timestamptz ELSE e.first_used_at END,
        updated_at = ${now}
      FROM ok WHERE e.id = ok.esim_id AND e.id = ANY (ARRAY(SELECT esim_id FROM ok))
    )
    SELECT calc.idx, calc.esim_id, coalesce(calc.inactive, false) AS inactive, calc.no_package, calc.lower,
      ok.idx IS NOT NULL AS applied, calc.bundle_order_id, calc.data_mb, calc.before, calc.after,
      coalesce(ok.reached_pct, '{}') AS reached_pct, coalesce(ok.installed_now, false) AS installed_now,
      coalesce(ok.never_used AND ok.after > 0, false) AS first_use, coalesce(ok.low_data, false) AS low_data,
      coalesce(ok.depleted, false) AS depleted
    FROM calc LEFT JOIN ok ON ok.idx = calc.idx
    ORDER BY calc.idx`.execute(trx)
  return rows.map((r) => ({
    ...r,
    data_mb: r.data_mb === null ? null : Number(r.data_mb),
    before: Number(r.before),
    after: Number(r.after),
  }))
}

/** A usage report waiting in the inbox. */
export interface QueuedReport {
  id: string
  organization_id: string
  environment: string
  esim_id: string
  data_used_mb: number
  /** The sandbox clock of the eSIM's cardholder (null: none; read only in the sandbox). */
  clock_id: string | null
}

/** Queues reports for the usage sweep (a network's feed), in one statement. */
export async function queueReports(
  db: Db,
  reports: readonly Omit<QueuedReport, 'id' | 'clock_id'>[],
  now: Date,
): Promise<number> {
  if (reports.length === 0) return 0
  const { rows } = await sql<{ n: number }>`
    WITH q AS (
      INSERT INTO esim_usage_reports (organization_id, environment, esim_id, data_used_mb, reported_at)
      SELECT r.organization_id, r.environment, r.esim_id, r.data_used_mb, ${now}
      FROM json_to_recordset(${JSON.stringify(reports)}::json)
        AS r(organization_id text, environment text, esim_id text, data_used_mb int)
      RETURNING 1
    )
    SELECT count(*)::int AS n FROM q`.execute(db)
  return Number(rows[0].n)
}

/**
 * Takes up to `limit` of the oldest queued reports out of the inbox, inside the caller's transaction: they are gone
 * once it commits, and back (for the next sweep) if it rolls back. Reports another sweep holds are skipped.
 */
export async function claimReports(trx: Db, limit: number): Promise<QueuedReport[]> {
  const { rows } = await sql<QueuedReport>`
    DELETE FROM esim_usage_reports WHERE id IN (
      SELECT id FROM esim_usage_reports ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED
    )
    RETURNING id, organization_id, environment, esim_id, data_used_mb,
      CASE WHEN environment = 'sandbox' THEN ${clockOfCardholderSql(
        sql`(SELECT e.cardholder_id FROM esims AS e WHERE e.id = esim_usage_reports.esim_id)`,
      )} END AS clock_id`.execute(trx)
  return rows.map((r) => ({ ...r, id: String(r.id) })).sort((a, b) => Number(a.id) - Number(b.id))
}

/** How many reports wait in the inbox (the operator's health page, the benchmark). */
export async function queuedReports(db: Db): Promise<number> {
  const { rows } = await sql<{
    n: number
  }>`SELECT count(*)::int AS n FROM esim_usage_reports`.execute(db)
  return Number(rows[0].n)
}
