import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Auto top-up from stored value (docs/esim.md, "Auto top-up"): an eSIM's settings (the add-on, the paying account, the
 * trigger and the monthly cap) and how many ran in the calendar month it names; on each package the moment its
 * crossing of the trigger was claimed (claimed once: one top-up per crossing); on each order what started it (`manual`
 * or `auto`) and, for an automatic one, the package whose crossing started it (unique: never two for one crossing).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE esims ADD COLUMN auto_top_up_id text',
    'ALTER TABLE esims ADD COLUMN auto_top_up_account_id text',
    'ALTER TABLE esims ADD COLUMN auto_top_up_trigger text',
    'ALTER TABLE esims ADD COLUMN auto_top_up_threshold_pct integer',
    'ALTER TABLE esims ADD COLUMN auto_top_up_max_per_month integer',
    'ALTER TABLE esims ADD COLUMN auto_top_up_month text',
    'ALTER TABLE esims ADD COLUMN auto_top_up_runs integer NOT NULL DEFAULT 0',
    'ALTER TABLE esim_bundles ADD COLUMN auto_top_up_claimed_at timestamptz',
    'ALTER TABLE esim_bundles ADD COLUMN auto_top_up_failure text',
    "ALTER TABLE esim_orders ADD COLUMN trigger text NOT NULL DEFAULT 'manual'",
    'ALTER TABLE esim_orders ADD COLUMN crossing_order_id text',
    `CREATE UNIQUE INDEX esim_orders_crossing ON esim_orders (crossing_order_id)
      WHERE crossing_order_id IS NOT NULL`,
    // `GET /v1/esim/orders?trigger=auto`: the few auto top-ups among many bought orders, newest first.
    `CREATE INDEX esim_orders_trigger ON esim_orders (organization_id, environment, trigger, id DESC)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
