import { sql } from 'kysely'
import type { Db } from '../db/types.js'
import { ApiError } from '../http/errors.js'
import { autonomousDb, type RequestUnit } from '../http/request-unit.js'
import { ulid } from '../lib/ids.js'
import { isProcessorError, type ProcessorOperation, type ProcessorScope } from './port.js'
import './types.js'

export interface ProcessorCallDeps {
  db: Db
  /** A request's unit of work: the intent commits through its autonomous handle. */
  unit?: RequestUnit
  clock: { now(): Date }
  log?: { warn(obj: object, msg: string): void }
}

export interface ProcessorCall<T> {
  /** The intent record: pass it to `recordOutcome` in the transaction that writes the local change. */
  operationId: string
  result: T
}

/** The API error a processor failure answers (502s, or 422 operation_unsupported). */
export function processorApiError(err: unknown): ApiError | null {
  if (!isProcessorError(err)) return null
  return new ApiError(err.failure, { detail: { operation: err.operation, message: err.message } })
}

/**
 * Calls a processor outside any database transaction: records the intent first, then calls. On failure
 * the intent is marked failed and the caller gets the 502 to answer, having written nothing else; on
 * success the caller records the outcome together with its own change (`recordOutcome`), so an intent
 * left `started` is exactly a call whose local outcome never landed (the reconciliation worklist).
 */
export async function callProcessor<T>(
  deps: ProcessorCallDeps,
  scope: ProcessorScope,
  intent: { processor: string; operation: ProcessorOperation; subjectId: string },
  call: () => Promise<T>,
): Promise<ProcessorCall<T>> {
  const operationId = `pop_${ulid()}`
  const now = deps.clock.now()
  // The intent and its failure commit at once, whatever the request answers: they are the trace a crash leaves.
  await sql`INSERT INTO processor_operations (id, organization_id, environment, processor, operation, subject_id, state, created_at, updated_at)
    VALUES (${operationId}, ${scope.organizationId}, ${scope.environment}, ${intent.processor}, ${intent.operation}, ${intent.subjectId}, 'started', ${now}, ${now})`.execute(
    autonomousDb(deps),
  )
  try {
    // The processor is another system: what it records (the simulators keep their state here) is not the request's to roll back.
    return { operationId, result: await call() }
  } catch (err) {
    const apiError = processorApiError(err)
    const message = err instanceof Error ? err.message : String(err)
    await sql`UPDATE processor_operations SET state = 'failed', error = ${apiError?.code ?? 'internal_error'}, updated_at = ${deps.clock.now()}
      WHERE id = ${operationId}`.execute(autonomousDb(deps))
    deps.log?.warn(
      { operation: intent.operation, subject: intent.subjectId, error: message },
      'processor call failed',
    )
    throw apiError ?? new ApiError('processor_unavailable', { detail: message })
  }
}

/** Marks the intent as done, in the same transaction as the local change it led to. */
export async function recordOutcome(
  trx: Db,
  operationId: string,
  state: 'succeeded' | 'accepted',
  now: Date,
): Promise<void> {
  await sql`UPDATE processor_operations SET state = ${state}, updated_at = ${now} WHERE id = ${operationId}`.execute(
    trx,
  )
}
