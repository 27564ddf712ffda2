import { sql } from 'kysely'
import type { Db } from '../db/types.js'
import { json } from '../db/types.js'
import { newId } from '../lib/ids.js'
import type { AppDeps } from '../app-deps.js'
import './table.js'
import type { JobType } from './types.js'
import { JOBS_CHANNEL, signalJobsQueued } from './wakeup.js'

export interface JobInput {
  /** One of the catalogue (`types.ts`): a type no module handles cannot be queued. */
  type: JobType
  payload: Record<string, unknown>
  /** When the job becomes due; now by default. */
  runAt?: Date
  organizationId?: string | null
  environment?: string | null
  /**
   * The sandbox clock of the job's object: the job is due at `runAt` on that clock's time and waits, in state
   * `on_clock`, for the clock's advance to run it (`clock-jobs.ts`); the runners never claim it.
   */
  clockId?: string | null
}

export interface JobRecord {
  id: string
  type: string
  payload: Record<string, unknown>
  organization_id: string | null
  environment: string | null
  attempts: number
}

/** What a job handler may answer: done, or "try again at" (the runner also retries thrown errors with backoff). */
export type JobOutcome = void | { retryAt: Date }
export type JobHandler = (deps: AppDeps, job: JobRecord) => Promise<JobOutcome>

/** Queues a job in the caller's transaction: it exists only if the change that caused it commits. */
export async function enqueue(trx: Db, input: JobInput): Promise<string> {
  const id = newId('job')
  const now = new Date()
  const runAt = input.runAt ?? now
  if (input.clockId) {
    await sql`INSERT INTO jobs (id, type, payload, organization_id, environment, state, run_at, attempts, clock_id, created_at, updated_at)
      VALUES (${id}, ${input.type}, ${json(input.payload)}, ${input.organizationId ?? null}, ${input.environment ?? null}, 'on_clock', ${runAt}, 0, ${input.clockId}, ${now}, ${now})`.execute(
      trx,
    )
    return id
  }
  const insert = sql`INSERT INTO jobs (id, type, payload, organization_id, environment, state, run_at, attempts, created_at, updated_at)
    VALUES (${id}, ${input.type}, ${json(input.payload)}, ${input.organizationId ?? null}, ${input.environment ?? null}, 'queued', ${runAt}, 0, ${now}, ${now})`
  if (runAt.getTime() <= now.getTime() + 1000) {
    // Due now: wake the workers when this transaction commits (NOTIFY is delivered at commit, never on rollback).
    await sql`WITH j AS (${insert}) SELECT pg_notify(${JOBS_CHANNEL}, '')`.execute(trx)
    signalJobsQueued()
  } else {
    await insert.execute(trx)
  }
  return id
}
