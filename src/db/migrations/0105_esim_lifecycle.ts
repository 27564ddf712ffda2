import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * The eSIM lifecycle (docs/esim.md, "Lifecycle and alerts"): where the device is attached (`country`), when the profile
 * was installed and first used, when its last package's validity ends (`valid_until`) and when that was announced
 * (`expired_at`); the organization's alert settings and an eSIM's own overrides; the usage thresholds each package has
 * already announced (`alerted_pct`) and the validity warnings already sent for the current `valid_until`; and the inbox
 * of usage reports the usage sweep applies in batches.
 *
 * Existing rows start as if the alerts of the old rules had been sent: a package already past 80 % has announced 80, an
 * eSIM whose validity has ended has been announced expired, and an eSIM that took data was installed and used then.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE esims ADD COLUMN country text',
    'ALTER TABLE esims ADD COLUMN installed_at timestamptz',
    'ALTER TABLE esims ADD COLUMN first_used_at timestamptz',
    'ALTER TABLE esims ADD COLUMN valid_until timestamptz',
    'ALTER TABLE esims ADD COLUMN expired_at timestamptz',
    "ALTER TABLE esims ADD COLUMN validity_warned_hours integer[] NOT NULL DEFAULT '{}'",
    'ALTER TABLE esims ADD COLUMN usage_thresholds_pct integer[]',
    'ALTER TABLE esims ADD COLUMN validity_warning_hours integer[]',
    "ALTER TABLE esim_bundles ADD COLUMN alerted_pct integer[] NOT NULL DEFAULT '{}'",
    `CREATE TABLE esim_alert_settings (
      organization_id text NOT NULL,
      environment text NOT NULL,
      usage_thresholds_pct integer[] NOT NULL,
      validity_warning_hours integer[] NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, environment)
    )`,
    `CREATE TABLE esim_usage_reports (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      esim_id text NOT NULL,
      data_used_mb integer NOT NULL,
      reported_at timestamptz NOT NULL
    )`,
    `UPDATE esims SET valid_until = (SELECT max(b.expires_at) FROM esim_bundles b WHERE b.esim_id = esims.id)`,
    'UPDATE esims SET expired_at = valid_until WHERE valid_until <= now()',
    `UPDATE esims SET installed_at = updated_at, first_used_at = updated_at WHERE status = 'enabled'`,
    `UPDATE esim_bundles SET alerted_pct = '{80}'
      WHERE data_mb IS NOT NULL AND data_used_mb::bigint * 100 >= 80 * data_mb::bigint`,
    `UPDATE esim_bundles SET alerted_pct = '{80,100}'
      WHERE data_mb IS NOT NULL AND data_used_mb >= data_mb`,
    // The validity sweep reads the eSIMs whose validity ends within the longest warning, or has ended unannounced.
    'CREATE INDEX esims_validity ON esims (valid_until) WHERE expired_at IS NULL',
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
