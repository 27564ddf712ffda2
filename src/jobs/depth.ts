import { sql } from 'kysely'
import type { Db } from '../db/types.js'
import './table.js'

/** The queue of one job type as the operator's health page shows it. */
export interface JobQueueDepth {
  type: string
  /** Waiting to run (due or scheduled later, retries after an error included). */
  queued: number
  /** Claimed by a runner whose lease has not expired. */
  running: number
  /** Given up after too many errors (`dead`): they stay 30 days for inspection (`dead-jobs.ts`) and never run again. */
  failed: number
  /** When the oldest queued job that is due now became due (null when none is): how far the runners are behind. */
  oldestDueAt: Date | null
}

/** The job queue by type and state, every type with at least one job, by type name. Finished jobs are deleted, so they never count. */
export async function jobQueueDepth(db: Db, now: Date): Promise<JobQueueDepth[]> {
  const { rows } = await sql<{
    type: string
    queued: number
    running: number
    failed: number
    oldest_due_at: Date | string | null
  }>`
    SELECT type,
      count(*) FILTER (WHERE state = 'queued' AND (locked_until IS NULL OR locked_until <= ${now}))::int AS queued,
      count(*) FILTER (WHERE state = 'queued' AND locked_until > ${now})::int AS running,
      count(*) FILTER (WHERE state = 'dead')::int AS failed,
      min(run_at) FILTER (WHERE state = 'queued' AND (locked_until IS NULL OR locked_until <= ${now}) AND run_at <= ${now}) AS oldest_due_at
    FROM jobs GROUP BY type ORDER BY type`.execute(db)
  return rows.map((r) => ({
    type: r.type,
    queued: Number(r.queued),
    running: Number(r.running),
    failed: Number(r.failed),
    oldestDueAt: r.oldest_due_at === null ? null : new Date(r.oldest_due_at),
  }))
}
