import { sql, type RawBuilder } from 'kysely'
import { isoText } from '../../db/json-sql.js'

/**
 * `presentEsimSummary` in SQL, for statements that write an eSIM's events from many rows at once (the usage and
 * validity sweeps): the same keys in the same order, over the `esims` row named `alias`, its packages read in a
 * subquery as `bundlesOf` reads them (oldest first, a running package past its expiry reading `expired`).
 * test/esim/alerts.test.ts asserts an event built this way equals the eSIM read back through the API.
 */
export function esimSummaryJson(alias: string, now: Date): RawBuilder<unknown> {
  const col = (c: string) => sql.ref(`${alias}.${c}`)
  const iso = (c: string) => isoText(`${alias}.${c}`)
  return sql`json_build_object(
    'id', ${col('id')}, 'object', 'esim', 'iccid', ${col('iccid')}, 'status', ${col('status')},
    'cardholder_id', ${col('cardholder_id')}, 'order_id', ${col('order_id')}, 'country', ${col('country')},
    'packages', ${bundlesJson(col('id'), now)},
    'installed_at', ${iso('installed_at')}, 'first_used_at', ${iso('first_used_at')}, 'valid_until', ${iso('valid_until')},
    'alert_settings', ${alertSettingsJson(alias)}, 'auto_top_up', ${autoTopUpJson(alias, now)},
    'created_at', ${iso('created_at')}, 'updated_at', ${iso('updated_at')})`
}

/** The eSIM's own alert settings, null when it has none (`presentAlertOverrides`). */
function alertSettingsJson(alias: string): RawBuilder<unknown> {
  const usage = sql.ref(`${alias}.usage_thresholds_pct`)
  const hours = sql.ref(`${alias}.validity_warning_hours`)
  return sql`CASE WHEN ${usage} IS NULL AND ${hours} IS NULL THEN NULL
    ELSE json_build_object('usage_thresholds_pct', to_json(${usage}), 'validity_warning_hours', to_json(${hours})) END`
}

/** The eSIM's auto top-up, null when off (`presentAutoTopUp`): this month's runs (UTC), 0 in another month. */
function autoTopUpJson(alias: string, now: Date): RawBuilder<unknown> {
  const col = (c: string) => sql.ref(`${alias}.auto_top_up_${c}`)
  const month = now.toISOString().slice(0, 7)
  return sql`CASE WHEN ${col('id')} IS NULL THEN NULL ELSE json_build_object(
    'top_up_id', ${col('id')}, 'account_id', ${col('account_id')}, 'trigger', ${col('trigger')},
    'max_per_month', ${col('max_per_month')}, 'threshold_pct', ${col('threshold_pct')},
    'runs_this_month', CASE WHEN ${col('month')} = ${month} THEN ${col('runs')} ELSE 0 END) END`
}

/** `presentBundle` of every package on the eSIM `esimId`, oldest first (`[]` without one). */
function bundlesJson(esimId: RawBuilder<unknown>, now: Date): RawBuilder<unknown> {
  return sql`COALESCE((SELECT json_agg(json_build_object(
      'package_id', b.package_id, 'top_up_id', o.top_up_id, 'order_id', b.order_id,
      'name', CASE WHEN o.top_up_id IS NULL THEN p.name ELSE 'Top-up ' || COALESCE(t.name, o.top_up_id) END,
      'status', CASE WHEN b.status = 'running' AND b.expires_at <= ${now}::timestamptz THEN 'expired' ELSE b.status END,
      'data_mb', b.data_mb, 'data_used_mb', b.data_used_mb,
      'data_remaining_mb', CASE WHEN b.data_mb IS NULL THEN NULL ELSE GREATEST(0, b.data_mb - b.data_used_mb) END,
      'activated_at', ${isoText('b.activated_at')}, 'expires_at', ${isoText('b.expires_at')}
    ) ORDER BY b.created_at, b.order_id)
    FROM esim_bundles AS b JOIN esim_packages AS p ON p.id = b.package_id JOIN esim_orders AS o ON o.id = b.order_id
    LEFT JOIN esim_top_ups AS t ON t.id = o.top_up_id
    WHERE b.esim_id = ${esimId}), '[]'::json)`
}
