import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Deleting a sandbox clock deletes its objects (docs/sandbox-clocks.md, "Deleting"): the clock is marked deleted
 * first (`deleted_at`), then its cardholders and everything under them go in batches, and `objects_deleted_at` says
 * when that was finished; a deletion interrupted between the two is finished by the worker (the partial index finds
 * it). Clocks deleted before this version detached their cardholders instead: nothing of theirs is left to delete.
 * Holds get an index on their account (the deletion deletes an account's holds, and deleting an account checks its
 * foreign key from holds; the only index there was held open holds only).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE sandbox_clocks ADD COLUMN objects_deleted_at timestamptz',
    'UPDATE sandbox_clocks SET objects_deleted_at = deleted_at WHERE deleted_at IS NOT NULL',
    `CREATE INDEX sandbox_clocks_deleting ON sandbox_clocks (updated_at)
       WHERE deleted_at IS NOT NULL AND objects_deleted_at IS NULL`,
    'CREATE INDEX holds_account ON holds (account_id)',
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
