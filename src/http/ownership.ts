import type { FastifyInstance } from 'fastify'
import { sql } from 'kysely'
import type { Db } from '../db/types.js'
import type { Scope } from './context.js'
import { ApiError, type ErrorCode } from './errors.js'

interface Owned { organization_id: string; environment: string }

/**
 * The rule for every lookup by id: another organization's object answers exactly like a missing one;
 * the caller's own object in the other environment answers environment_mismatch (keys were mixed up).
 */
export function requireOwned<T extends Owned>(row: T | undefined | null, ctx: Scope, notFound: ErrorCode, param?: string): T {
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

/** The table behind each id a /v1 list filter can name. */
const FILTER_TABLES: Record<string, string> = {
  cardholder_id: 'cardholders', account_id: 'accounts', card_id: 'cards', program_id: 'programs',
  authorization_id: 'authorizations', transaction_id: 'transactions',
}

/**
 * List filters follow the rule for ids (decisions.md, environments): the caller's own object of the other
 * environment answers `403 environment_mismatch`, as it does in a path or a body. Any other id (unknown, or
 * another organization's) is not an error in a filter: it matches nothing, and the list is empty. One lookup
 * per filter id given, after validation (the values are well-formed) and before the list is read.
 */
export function installFilterEnvironmentCheck(app: FastifyInstance, db: Db): void {
  app.addHook('preHandler', async (req) => {
    if (req.method !== 'GET' || !req.ctx || !req.url.startsWith('/v1/')) return
    const query = req.query as Record<string, unknown> | undefined
    if (!query) return
    for (const [param, table] of Object.entries(FILTER_TABLES)) {
      const id = query[param]
      if (typeof id !== 'string') continue
      const { rows } = await sql<{ organization_id: string; environment: string }>`
        SELECT organization_id, environment FROM ${sql.table(table)} WHERE id = ${id}`.execute(db)
      const row = rows[0]
      if (row && row.organization_id === req.ctx.organizationId && row.environment !== req.ctx.environment) {
        throw new ApiError('environment_mismatch', { param, message: `${param} belongs to the ${row.environment} environment; use a ${row.environment} token.` })
      }
    }
  })
}
