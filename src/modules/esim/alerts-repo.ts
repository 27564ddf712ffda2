import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import type { EsimAlertSettingsTable } from './types.js'
import './types.js'

export type AlertSettingsRow = Selectable<EsimAlertSettingsTable>

export async function findAlertSettings(
  db: Db,
  organizationId: string,
  environment: string,
): Promise<AlertSettingsRow | undefined> {
  return db
    .selectFrom('esim_alert_settings')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .executeTakeFirst()
}

export async function putAlertSettings(
  db: Db,
  row: Omit<AlertSettingsRow, 'created_at'>,
  now: Date,
): Promise<AlertSettingsRow> {
  const { rows } = await sql<AlertSettingsRow>`
    INSERT INTO esim_alert_settings (organization_id, environment, usage_thresholds_pct, validity_warning_hours, created_at, updated_at)
    VALUES (${row.organization_id}, ${row.environment}, ${row.usage_thresholds_pct}::int[], ${row.validity_warning_hours}::int[], ${now}, ${now})
    ON CONFLICT (organization_id, environment) DO UPDATE SET usage_thresholds_pct = EXCLUDED.usage_thresholds_pct,
      validity_warning_hours = EXCLUDED.validity_warning_hours, updated_at = EXCLUDED.updated_at
    RETURNING *`.execute(db)
  return rows[0]
}

/** An eSIM's own settings: each field given replaces its own (null: the organization's again). */
export async function setEsimAlertOverrides(
  trx: Db,
  esimId: string,
  overrides: { usage_thresholds_pct?: number[] | null; validity_warning_hours?: number[] | null },
  now: Date,
): Promise<void> {
  const set: Record<string, unknown> = { updated_at: now }
  if (overrides.usage_thresholds_pct !== undefined)
    set.usage_thresholds_pct = overrides.usage_thresholds_pct
  if (overrides.validity_warning_hours !== undefined)
    set.validity_warning_hours = overrides.validity_warning_hours
  await trx.updateTable('esims').set(set).where('id', '=', esimId).execute()
}
