import { sql } from 'kysely'
import type { Db } from '../db/types.js'
import { ProcessorError, type ProcessorOperation, type ProcessorScope } from './port.js'
import './types.js'

export const FAULT_ERRORS = ['processor_unavailable', 'processor_permission_denied'] as const
export type FaultError = (typeof FAULT_ERRORS)[number]

export interface FaultSetting {
  operation: ProcessorOperation
  error: FaultError
  remaining: number
}

/**
 * Arms the simulator: the next `count` calls of `operation` in this organization and environment fail
 * with `error`. Stored in the database so every node of a deployment sees it; count 0 disarms.
 */
export async function setFault(
  db: Db,
  scope: ProcessorScope,
  operation: ProcessorOperation,
  error: FaultError,
  count: number,
  now: Date,
): Promise<FaultSetting> {
  await sql`INSERT INTO processor_faults (organization_id, environment, operation, error, remaining, updated_at)
    VALUES (${scope.organizationId}, ${scope.environment}, ${operation}, ${error}, ${count}, ${now})
    ON CONFLICT (organization_id, environment, operation)
    DO UPDATE SET error = EXCLUDED.error, remaining = EXCLUDED.remaining, updated_at = EXCLUDED.updated_at`.execute(
    db,
  )
  return { operation, error, remaining: count }
}

/** The armed faults of a tenant, for the simulator's read-back. */
export async function listFaults(db: Db, scope: ProcessorScope): Promise<FaultSetting[]> {
  const rows = await db
    .selectFrom('processor_faults')
    .select(['operation', 'error', 'remaining'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('remaining', '>', 0)
    .orderBy('operation')
    .execute()
  return rows.map((r) => ({
    operation: r.operation as ProcessorOperation,
    error: r.error as FaultError,
    remaining: r.remaining,
  }))
}

/**
 * Called by the simulated processors before each operation: consumes one armed fault atomically (two
 * nodes never both consume the last one) and throws it as the processor's failure.
 */
export async function takeFault(
  db: Db,
  scope: ProcessorScope,
  operation: ProcessorOperation,
): Promise<void> {
  const { rows } = await sql<{ error: FaultError }>`
    UPDATE processor_faults SET remaining = remaining - 1
    WHERE organization_id = ${scope.organizationId} AND environment = ${scope.environment}
      AND operation = ${operation} AND remaining > 0
    RETURNING error`.execute(db)
  const fault = rows[0]
  if (fault)
    throw new ProcessorError(
      fault.error,
      operation,
      `Injected fault: ${operation} answered ${fault.error}.`,
    )
}
