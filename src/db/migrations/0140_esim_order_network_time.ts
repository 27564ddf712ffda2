import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * An eSIM order's own times (`created_at`, `updated_at`) follow its cardholder's sandbox clock from the start
 * (docs/sandbox-clocks.md), so what settlement and the in-flight window measure moves to a column of its own:
 * `network_at`, wall time, when an open order was sent to the network (in flight) or its create call timed out
 * (unsettled). Open orders get it from the times that held it until now; the open-orders index follows it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE esim_orders ADD COLUMN network_at timestamptz',
    `UPDATE esim_orders SET network_at = CASE WHEN status = 'unsettled' THEN updated_at ELSE created_at END
       WHERE status IN ('pending', 'unsettled')`,
    'DROP INDEX esim_orders_open',
    `CREATE INDEX esim_orders_open ON esim_orders (network_at) WHERE status IN ('pending', 'unsettled')`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
