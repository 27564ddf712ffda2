import type { Timestamp } from '../db/types.js'

/** The job queue's table: one row per job, claimed with a lease by the runners (`queue.ts`). */
export interface JobsTable {
  id: string
  type: string
  payload: Record<string, unknown>
  organization_id: string | null
  environment: string | null
  state: string
  run_at: Timestamp
  attempts: number
  locked_until: Timestamp | null
  /** The claim holding the lease (runner id and batch); null while queued. */
  locked_by: string | null
  last_error: string | null
  /** The sandbox clock whose advance runs this job (state `on_clock`); null for every other job. */
  clock_id: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/types.js' {
  interface Database {
    jobs: JobsTable
  }
}
