import { randomBytes } from 'node:crypto'
import { sql } from 'kysely'
import type { AppDeps } from '../app-deps.js'
import type { Db } from '../db/types.js'
import { purgeInBatches } from '../db/purge.js'
import { atTime } from '../lib/object-clock.js'
import type { JobHandler, JobRecord } from './queue.js'
import { MAX_JOB_ERRORS } from './runner.js'
import './table.js'

/**
 * Jobs under a sandbox clock (docs/sandbox-clocks.md): queued `on_clock` by `enqueue({clockId})`, due at their
 * clock's time, run one by one by the clock's advance in time order. A job is taken under a lease, like the
 * runners' claims, so two advances of one clock (or one resumed after a crash) never run it twice at once, and
 * a handler that died mid-run is taken again once its lease has passed (handlers are conditional updates).
 */

const LEASE_MS = 60_000

export interface ClockJob {
  id: string
  type: string
  at: Date
}

/** Up to `limit` jobs of clock `clockId` due at or before `until`, earliest first (ties by id). */
export async function dueJobsOnClock(
  db: Db,
  clockId: string,
  until: Date,
  now: Date,
  limit: number,
): Promise<ClockJob[]> {
  const { rows } = await sql<{ id: string; type: string; run_at: Date | string }>`
    SELECT id, type, run_at FROM jobs
    WHERE clock_id = ${clockId} AND state = 'on_clock' AND run_at <= ${until}
      AND (locked_until IS NULL OR locked_until <= ${now})
    ORDER BY run_at, id LIMIT ${limit}`.execute(db)
  return rows.map((r) => ({ id: r.id, type: r.type, at: new Date(r.run_at) }))
}

/**
 * Runs the clock job `id` once with its handler, the dependencies' clock reading the job's due time. Answers
 * whether it ran (false: another advance holds it, or it is done). A handler's "try again at" (on the clock's
 * time) puts it back on the clock at that time; an error puts it back as it was, parked `dead` after
 * MAX_JOB_ERRORS like any job.
 */
export async function runJobOnClock(
  deps: AppDeps,
  handlers: ReadonlyMap<string, JobHandler>,
  id: string,
): Promise<boolean> {
  const now = new Date()
  const claim = `clock_${randomBytes(6).toString('hex')}`
  const { rows } = await sql<JobRecord & { run_at: Date | string }>`
    UPDATE jobs SET locked_until = ${new Date(now.getTime() + LEASE_MS)}, locked_by = ${claim},
      attempts = attempts + 1, updated_at = ${now}
    WHERE id = ${id} AND state = 'on_clock' AND (locked_until IS NULL OR locked_until <= ${now})
    RETURNING id, type, payload, organization_id, environment, attempts, run_at`.execute(deps.db)
  const job = rows[0]
  if (!job) return false
  const handler = handlers.get(job.type)
  try {
    if (!handler) throw new Error(`no handler for job type ${job.type}`)
    const outcome = await handler(atTime(deps, new Date(job.run_at)), job)
    if (outcome && outcome.retryAt)
      await sql`UPDATE jobs SET run_at = ${outcome.retryAt}, locked_by = NULL, locked_until = NULL,
        updated_at = ${new Date()} WHERE id = ${id} AND locked_by = ${claim}`.execute(deps.db)
    else await sql`DELETE FROM jobs WHERE id = ${id} AND locked_by = ${claim}`.execute(deps.db)
    return true
  } catch (err) {
    deps.log.error({ err, job_id: id, job_type: job.type }, 'clock job failed')
    const dead = job.attempts >= MAX_JOB_ERRORS
    await sql`UPDATE jobs SET locked_by = NULL, locked_until = NULL, last_error = ${String(err)},
      state = ${dead ? 'dead' : 'on_clock'}, updated_at = ${new Date()}
      WHERE id = ${id} AND locked_by = ${claim}`.execute(deps.db)
    return false
  }
}

/**
 * Deletes the jobs left on clock `clockId` (the clock is deleted, and its objects with it: docs/sandbox-clocks.md,
 * "Deleting"), a bounded batch per statement; answers how many went.
 */
export async function deleteJobsOnClock(db: Db, clockId: string): Promise<number> {
  return purgeInBatches(db, {
    table: 'jobs',
    where: sql`clock_id = ${clockId} AND state = 'on_clock'`,
    key: 'id',
    batch: 1000,
    pauseMs: 0,
    restFactor: 0,
  })
}
