import { sql } from 'kysely'
import type { AppDeps } from '../app-deps.js'
import { purgeInBatches, type PurgeOptions } from '../db/purge.js'
import './table.js'

/** A `dead` job (given up after `MAX_JOB_ERRORS`) stays for inspection this long after it was last touched. */
export const DEAD_JOB_RETENTION_MS = 30 * 24 * 60 * 60 * 1000

/**
 * Removes dead jobs last updated more than 30 days ago, in short batches through the partial index `jobs_dead`
 * (dead rows only, so queued jobs never pay for it); answers how many. Finished jobs need no purge: the runner
 * deletes them when they complete. A dead schedule revived by a worker start meanwhile is queued again and stays.
 */
export async function purgeDeadJobs(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  const cutoff = new Date(deps.clock.now().getTime() - DEAD_JOB_RETENTION_MS)
  return purgeInBatches(deps.db, {
    ...options,
    table: 'jobs',
    key: 'id',
    orderBy: 'updated_at',
    where: sql`state = 'dead' AND updated_at < ${cutoff}`,
  })
}
