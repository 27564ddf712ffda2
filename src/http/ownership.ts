import type { RequestCtx } from './context.js'
import { ApiError, type ErrorCode } from './errors.js'

interface Owned { organization_id: string; environment: string }

/**
 * The rule for every lookup by id: another organization's object answers exactly like a missing one;
 * the caller's own object in the other environment answers environment_mismatch (keys were mixed up).
 */
export function requireOwned<T extends Owned>(row: T | undefined | null, ctx: RequestCtx, notFound: ErrorCode, param?: string): T {
  if (!row || row.organization_id !== ctx.organizationId) throw new ApiError(notFound, param ? { param } : {})
  if (row.environment !== ctx.environment) {
    throw new ApiError('environment_mismatch', { message: `This object belongs to the ${row.environment} environment; use a ${row.environment} token.` })
  }
  return row
}

/** ISO 8601 UTC text of a database timestamp, or null. */
export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  return (value instanceof Date ? value : new Date(value)).toISOString()
}
