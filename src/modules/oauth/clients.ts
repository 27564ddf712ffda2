import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { parseCidr } from '../../http/ip.js'
import { changeAuthorization } from '../../http/token-cache.js'
import { iso } from '../../http/ownership.js'
import {
  applyBounds,
  OPERATOR_CTX,
  paginate,
  type ListResult,
  type PageParams,
} from '../../http/pagination.js'
import { newId } from '../../lib/ids.js'
import type { OAuthClientView } from './client-schemas.js'
import { validateJwks } from './jwks.js'
import { findOrganization, type ClientRecord } from './repo.js'
import { DEFAULT_CLIENT_SCOPES, isScope } from './scopes.js'

/** The operator API's client: the REST object (`OAuthClient`) with the organization it belongs to. */
export type ClientView = OAuthClientView & { organization_id: string }

export function presentClient(row: ClientRecord): ClientView {
  return {
    object: 'oauth_client',
    id: row.id,
    organization_id: row.organization_id,
    environment: row.environment as ClientView['environment'],
    label: row.label,
    scopes: row.scopes as ClientView['scopes'],
    jwks: row.jwks,
    ip_allowlist: row.ip_allowlist,
    status: row.status as ClientView['status'],
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    revoked_at: iso(row.revoked_at),
  }
}

export function validateScopes(scopes: string[]): string[] {
  scopes.forEach((s, i) => {
    if (!isScope(s))
      throw new ApiError('invalid_parameter', {
        param: `scopes[${i}]`,
        message: `${s} is not a scope.`,
      })
  })
  return [...new Set(scopes)]
}

/** CIDR lists for network policies and clients; a bare address means that address only. */
export function validateAllowlist(list: string[], param: string): string[] {
  list.forEach((cidr, i) => {
    if (!parseCidr(cidr))
      throw new ApiError('invalid_parameter', {
        param: `${param}[${i}]`,
        message: `${cidr} is not an IP address or CIDR range.`,
      })
  })
  return list.map((c) => c.trim())
}

export async function getClient(deps: AppDeps, id: string): Promise<ClientRecord> {
  const row = await deps.db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()
  if (!row) throw new ApiError('client_not_found')
  return row as ClientRecord
}

/** True when the scope has an active client (the console's getting-started checklist). */
export async function hasActiveClient(db: Db, scope: Scope): Promise<boolean> {
  const row = await db
    .selectFrom('oauth_clients')
    .select('id')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('status', '=', 'active')
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/** A page of one organization's clients (both environments), oldest first. */
export async function listClients(
  deps: AppDeps,
  organizationId: string,
  page: PageParams,
): Promise<ListResult<ReturnType<typeof presentClient>>> {
  return paginate({
    ctx: OPERATOR_CTX,
    cursors: deps.cursors,
    url: '/operator/v1/clients',
    page,
    sortKey: (r: ClientRecord) => r.id,
    fetch: async (bounds) =>
      (await applyBounds(
        deps.db
          .selectFrom('oauth_clients')
          .selectAll()
          .where('organization_id', '=', organizationId),
        bounds,
        'id',
        'asc',
      ).execute()) as ClientRecord[],
    present: presentClient,
  })
}

/** What the operator's console filters the platform's clients by (each optional). */
export interface ClientFilter {
  organizationId?: string
  environment?: string
  status?: string
}

/** A page of the platform's clients, any organization, oldest first, narrowed by `filter` (the operator's console). */
export async function listPlatformClients(
  deps: AppDeps,
  filter: ClientFilter,
  page: PageParams,
): Promise<ListResult<ClientRecord>> {
  return paginate({
    ctx: OPERATOR_CTX,
    cursors: deps.cursors,
    url: '/console/operator/clients',
    page,
    sortKey: (r: ClientRecord) => r.id,
    fetch: async (bounds) => {
      let q = deps.db.selectFrom('oauth_clients').selectAll()
      if (filter.organizationId) q = q.where('organization_id', '=', filter.organizationId)
      if (filter.environment) q = q.where('environment', '=', filter.environment)
      if (filter.status) q = q.where('status', '=', filter.status)
      return (await applyBounds(q, bounds, 'id', 'asc').execute()) as ClientRecord[]
    },
    present: (r) => r,
  })
}

export interface ClientCreateInput {
  organization_id: string
  environment: string
  label: string
  scopes?: string[]
  jwks: unknown
  ip_allowlist?: string[] | null
}

/** `inSameTx`: the caller's work in the registration's transaction (the console's audit row). */
export async function createClient(
  deps: AppDeps,
  input: ClientCreateInput,
  inSameTx?: InSameTx<ClientRecord>,
): Promise<ClientRecord> {
  const org = await findOrganization(deps.db, input.organization_id)
  if (!org) throw new ApiError('organization_not_found', { param: 'organization_id' })
  const jwks = validateJwks(input.jwks)
  const scopes = validateScopes(input.scopes ?? DEFAULT_CLIENT_SCOPES)
  const allowlist = input.ip_allowlist
    ? validateAllowlist(input.ip_allowlist, 'ip_allowlist')
    : null
  return withTx(deps.db, async (trx) => {
    const row = (await trx
      .insertInto('oauth_clients')
      .values({
        id: newId('oc'),
        organization_id: input.organization_id,
        environment: input.environment,
        label: input.label,
        scopes: json(scopes),
        jwks: json(jwks),
        ip_allowlist: allowlist ? json(allowlist) : null,
        status: 'active',
        revoked_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow()) as ClientRecord
    await inSameTx?.(trx, row)
    return row
  })
}

export interface ClientUpdateInput {
  label?: string
  scopes?: string[]
  jwks?: unknown
  ip_allowlist?: string[] | null
}

/**
 * Scope and key changes apply to the next token request; tokens already issued keep their scopes. `inSameTx`: the
 * caller's work in the change's transaction (the console's audit row).
 */
export async function updateClient(
  deps: AppDeps,
  id: string,
  input: ClientUpdateInput,
  inSameTx?: InSameTx<ClientRecord>,
): Promise<ClientRecord> {
  const current = await getClient(deps, id)
  if (current.status === 'revoked')
    throw new ApiError('invalid_parameter', {
      param: 'id',
      message: 'A revoked client cannot be changed; revocation is final.',
    })
  const changes: Record<string, unknown> = { updated_at: deps.clock.now() }
  if (input.label !== undefined) changes.label = input.label
  if (input.scopes !== undefined) changes.scopes = json(validateScopes(input.scopes))
  if (input.jwks !== undefined) changes.jwks = json(validateJwks(input.jwks))
  if (input.ip_allowlist !== undefined)
    changes.ip_allowlist =
      input.ip_allowlist === null
        ? null
        : json(validateAllowlist(input.ip_allowlist, 'ip_allowlist'))
  const update = async (db: Db) => {
    const row = (await db
      .updateTable('oauth_clients')
      .set(changes)
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()) as ClientRecord
    await inSameTx?.(db, row)
    return row
  }
  // An allowlist change applies to tokens already issued: cached tokens are dropped.
  return input.ip_allowlist !== undefined
    ? changeAuthorization(deps.db, update)
    : withTx(deps.db, update)
}

/**
 * Immediate and final: the next request with any of its tokens answers invalid_access_token. `inSameTx`: the
 * caller's work in the revocation's transaction (the console's audit row); not called for a client already revoked.
 */
export async function revokeClient(
  deps: AppDeps,
  id: string,
  inSameTx?: InSameTx<ClientRecord>,
): Promise<ClientRecord> {
  const current = await getClient(deps, id)
  if (current.status === 'revoked') return current
  const now = deps.clock.now()
  const row = await changeAuthorization(deps.db, async (trx) => {
    const revoked = await trx
      .updateTable('oauth_clients')
      .set({ status: 'revoked', revoked_at: now, updated_at: now })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
    await trx.deleteFrom('access_tokens').where('client_id', '=', id).execute()
    await inSameTx?.(trx, revoked as ClientRecord)
    return revoked
  })
  return row as ClientRecord
}
