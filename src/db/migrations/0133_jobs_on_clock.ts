import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Jobs of objects under a sandbox clock (docs/sandbox-clocks.md): such a job is queued in state `on_clock`, due at
 * its clock's time (`run_at`), and is run by the clock's advance, never by the runners on wall time.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE jobs ADD COLUMN clock_id text',
    'CREATE INDEX jobs_on_clock ON jobs (clock_id, run_at, id) WHERE clock_id IS NOT NULL',
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
