import type { FastifyInstance } from 'fastify'
import type { Db } from '../db/types.js'
import type { AppDeps } from '../app-deps.js'
import { onClock } from '../lib/object-clock.js'
import { defineHook, type HookTable } from '../lib/slots.js'
import type { Scope } from './context.js'
import { ApiError, type ErrorCode } from './errors.js'

interface Owned {
  organization_id: string
  environment: string
}

/**
 * The rule for every lookup by id: another organization's object answers exactly like a missing one;
 * the caller's own object in the other environment answers environment_mismatch (keys were mixed up).
 */
export function requireOwned<T extends Owned>(
  row: T | undefined | null,
  ctx: Scope,
  notFound: ErrorCode,
  param?: string,
): T {
  if (!row || row.organization_id !== ctx.organizationId)
    throw new ApiError(notFound, param ? { param } : {})
  if (row.environment !== ctx.environment) {
    throw new ApiError('environment_mismatch', {
      message: `This object belongs to the ${row.environment} environment; use a ${row.environment} token.`,
    })
  }
  return row
}

/**
 * `requireOwned` of a row read with its cardholder's sandbox clock (`clock_id`), with the dependencies it moves on
 * (`onClock`: `deps.clock` reads the clock's time; `deps` itself without a clock).
 */
export async function requireOwnedOnClock<T extends Owned & { clock_id: string | null }>(
  deps: AppDeps,
  row: T | undefined,
  ctx: Scope,
  notFound: ErrorCode,
  param?: string,
): Promise<{ row: Omit<T, 'clock_id'>; deps: AppDeps; clockId: string | null }> {
  const { clock_id: clockId, ...owned } = requireOwned(row, ctx, notFound, param)
  return { row: owned, deps: await onClock(deps, clockId), clockId }
}

/** ISO 8601 UTC text of a database timestamp, or null. */
export function iso(value: Date | string | null | undefined): string | null {
  if (value === null || value === undefined) return null
  return (value instanceof Date ? value : new Date(value)).toISOString()
}

/** The organization and environment an object belongs to. */
export interface ObjectScope {
  organization_id: string
  environment: string
}

/** Finds the scope of one object by id; undefined when there is no such object. */
export type ScopeLookup = (db: Db, id: string) => Promise<ObjectScope | undefined>

/** While no module answers for a kind of object, no id of it is found: the filter matches nothing. */
const noScope: ScopeLookup = async () => undefined

/** Hooks that find the scope of one object by id, each answered by the object's module. */
export const CARDHOLDER_SCOPE = defineHook<ScopeLookup>('cardholderScope', noScope)
export const ACCOUNT_SCOPE = defineHook<ScopeLookup>('accountScope', noScope)
export const CARD_SCOPE = defineHook<ScopeLookup>('cardScope', noScope)
export const PROGRAM_SCOPE = defineHook<ScopeLookup>('programScope', noScope)
export const AUTHORIZATION_SCOPE = defineHook<ScopeLookup>('authorizationScope', noScope)
export const TRANSACTION_SCOPE = defineHook<ScopeLookup>('transactionScope', noScope)

/** The hook that finds the object behind each id a /v1 list filter can name. */
const FILTER_SCOPES = {
  cardholder_id: CARDHOLDER_SCOPE,
  account_id: ACCOUNT_SCOPE,
  card_id: CARD_SCOPE,
  program_id: PROGRAM_SCOPE,
  authorization_id: AUTHORIZATION_SCOPE,
  transaction_id: TRANSACTION_SCOPE,
}

/**
 * List filters follow the rule for ids (decisions.md, environments): the caller's own object of the other
 * environment answers `403 environment_mismatch`, as it does in a path or a body. Any other id (unknown, or
 * another organization's) is not an error in a filter: it matches nothing, and the list is empty. One lookup
 * per filter id given, after validation (the values are well-formed) and before the list is read; the object's
 * module makes it (`deps.hooks`), since its table is that module's.
 */
export function installFilterEnvironmentCheck(
  app: FastifyInstance,
  deps: { db: Db; hooks: HookTable },
): void {
  app.addHook('preHandler', async (req) => {
    if (req.method !== 'GET' || !req.ctx || !req.url.startsWith('/v1/')) return
    const query = req.query as Record<string, unknown> | undefined
    if (!query) return
    for (const [param, hook] of Object.entries(FILTER_SCOPES)) {
      const id = query[param]
      if (typeof id !== 'string') continue
      const row = await deps.hooks.get(hook)(deps.db, id)
      if (
        row &&
        row.organization_id === req.ctx.organizationId &&
        row.environment !== req.ctx.environment
      ) {
        throw new ApiError('environment_mismatch', {
          param,
          message: `${param} belongs to the ${row.environment} environment; use a ${row.environment} token.`,
        })
      }
    }
  })
}
