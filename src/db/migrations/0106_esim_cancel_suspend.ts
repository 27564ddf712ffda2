import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Canceling, suspending and resuming an eSIM (docs/esim.md, "Cancel, suspend, resume"): the status a suspended eSIM
 * returns to when resumed, and when an order was refunded (its account credited, or left off the organization's bill).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE esims ADD COLUMN suspended_from text',
    'ALTER TABLE esim_orders ADD COLUMN refunded_at timestamptz',
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
