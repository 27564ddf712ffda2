import type { Db } from '../db/types.js'
import { json } from '../db/types.js'
import { newId } from '../lib/ids.js'
import type { AppDeps } from '../app-deps.js'
import '../modules/events/types.js'

export interface JobInput {
  type: string
  payload: Record<string, unknown>
  /** When the job becomes due; now by default. */
  runAt?: Date
  organizationId?: string | null
  environment?: string | null
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

const handlers = new Map<string, JobHandler>()

/** Registers the code that runs jobs of `type`; each module registers its own at import time. */
export function registerJobHandler(type: string, handler: JobHandler): void {
  handlers.set(type, handler)
}

export function jobHandler(type: string): JobHandler | undefined {
  return handlers.get(type)
}

/** Queues a job in the caller's transaction: it exists only if the change that caused it commits. */
export async function enqueue(trx: Db, input: JobInput): Promise<string> {
  const id = newId('job')
  await trx.insertInto('jobs').values({
    id,
    type: input.type,
    payload: json(input.payload) as never,
    organization_id: input.organizationId ?? null,
    environment: input.environment ?? null,
    state: 'queued',
    run_at: input.runAt ?? new Date(),
    attempts: 0,
    locked_until: null,
    last_error: null,
    created_at: new Date(),
    updated_at: new Date(),
  }).execute()
  return id
}
