import type { AppDeps } from '../../app-deps.js'
import type { InSameTx } from '../../db/tx.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso, requireOwned } from '../../http/ownership.js'
import {
  applyBounds,
  paginate,
  whereIs,
  type ListResult,
  type PageParams,
} from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { createClient, revokeClient, updateClient, type ClientUpdateInput } from './clients.js'
import type { OAuthClientView } from './client-schemas.js'
import type { ClientRecord } from './repo.js'
import { DEFAULT_CLIENT_SCOPES, SCOPES } from './scopes.js'

/**
 * An organization's management of its own OAuth clients (`/v1/oauth_clients`, scope `clients:write`): the clients of
 * one environment, with the operator's rules for keys, allowlists and revocation (clients.ts), and one more: a caller
 * grants only scopes it holds itself, and changes or revokes only clients holding no scope it lacks, so holding
 * `clients:write` never widens what a caller can do. The console calls the same functions with its own `grantable`.
 */

/** The REST shape for the owning organization: as the operator's, without the organization. */
export function presentOwnClient(row: ClientRecord): OAuthClientView {
  return {
    id: row.id,
    object: 'oauth_client',
    environment: row.environment as OAuthClientView['environment'],
    label: row.label,
    scopes: row.scopes as OAuthClientView['scopes'],
    jwks: row.jwks,
    ip_allowlist: row.ip_allowlist,
    status: row.status as OAuthClientView['status'],
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    revoked_at: iso(row.revoked_at),
  }
}

async function findClient(deps: AppDeps, id: string): Promise<ClientRecord | undefined> {
  if (!isId('oc', id)) return undefined
  return (await deps.db
    .selectFrom('oauth_clients')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()) as ClientRecord | undefined
}

/** A client of the scope by id: another organization's answers like a missing one, the other environment's environment_mismatch. */
export async function ownClient(deps: AppDeps, scope: Scope, id: string): Promise<ClientRecord> {
  return requireOwned(await findClient(deps, id), scope, 'client_not_found')
}

/**
 * What a `/v1` caller may grant: the scopes its client holds now that its token was also given (a token asked for
 * fewer scopes grants only those; a client whose scopes were narrowed since the token was issued grants only what is left).
 */
export async function grantableScopes(
  deps: AppDeps,
  ctx: RequestCtx,
): Promise<ReadonlySet<string>> {
  const caller = await findClient(deps, ctx.clientId)
  return new Set((caller?.scopes ?? []).filter((s) => ctx.scopes.has(s)))
}

const MEMBER_GRANTABLE: ReadonlySet<string> = new Set(SCOPES)

/**
 * What a person who may change the organization (a console owner or developer) may grant: every scope. They act for
 * the organization itself, not through a client, so no client's scopes bound them, and they must be able to change or
 * revoke any of its clients (the demo client holds cards:secrets; a client the operator registered without naming
 * scopes holds the 3-D Secure ones). The named-only scopes are never ticked by default; scopes a deployment does not
 * issue are simply not put in tokens (POST /oauth/token).
 */
export function memberGrantableScopes(): ReadonlySet<string> {
  return MEMBER_GRANTABLE
}

function requireGrantable(scopes: readonly string[], grantable: ReadonlySet<string>): void {
  const missing = [...new Set(scopes)].filter((s) => !grantable.has(s))
  if (missing.length > 0) {
    throw new ApiError('invalid_parameter', {
      param: 'scopes',
      message: `A client can be given only scopes you hold; you do not hold ${missing.join(', ')}.`,
    })
  }
}

/** Changing or revoking a client that holds a scope the caller lacks would let the caller act with it (its keys) or against it. */
function requireManageable(client: ClientRecord, grantable: ReadonlySet<string>): void {
  const beyond = client.scopes.filter((s) => !grantable.has(s))
  if (beyond.length > 0) {
    throw new ApiError('insufficient_scope', {
      message: `This client holds scopes you do not hold (${beyond.join(', ')}); only a client holding them, or the platform operator, can change or revoke it.`,
    })
  }
}

export interface OwnClientListParams extends PageParams {
  status?: 'active' | 'revoked'
}

function listOf<T>(
  deps: AppDeps,
  ctx: RequestCtx,
  url: string,
  query: OwnClientListParams,
  present: (row: ClientRecord) => T,
): Promise<ListResult<T>> {
  return paginate({
    ctx,
    cursors: deps.cursors,
    url,
    page: query,
    sortKey: (r: ClientRecord) => r.id,
    fetch: async (bounds) => {
      let q = deps.db
        .selectFrom('oauth_clients')
        .selectAll()
        .where('organization_id', '=', ctx.organizationId)
        .where('environment', '=', ctx.environment)
      if (query.status !== undefined) q = whereIs(q, 'status', query.status)
      return (await applyBounds(q, bounds, 'id', 'desc').execute()) as ClientRecord[]
    },
    present,
  })
}

/** The scope's clients, newest first. */
export async function listOwnClients(
  deps: AppDeps,
  ctx: RequestCtx,
  query: OwnClientListParams,
): Promise<ListResult<OAuthClientView>> {
  return listOf(deps, ctx, '/v1/oauth_clients', query, presentOwnClient)
}

/** The scope's clients as stored, newest first (the console's list; its cursors are bound to `url`). */
export async function listClientsOf(
  deps: AppDeps,
  scope: Scope,
  url: string,
  query: OwnClientListParams,
): Promise<ListResult<ClientRecord>> {
  const ctx: RequestCtx = {
    organizationId: scope.organizationId,
    environment: scope.environment,
    requestId: 'console',
    clientId: 'console',
    scopes: new Set(),
  }
  return listOf(deps, ctx, url, query, (r) => r)
}

export async function getOwnClient(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<OAuthClientView> {
  return presentOwnClient(await ownClient(deps, ctx, id))
}

export interface OwnClientCreateInput {
  label: string
  scopes?: string[]
  jwks: unknown
  ip_allowlist?: string[] | null
}

/**
 * A new client of the scope; without `scopes`, the default scopes among those grantable (never cards:secrets nor
 * clients:write). `inSameTx`: the caller's work in the registration's transaction (the console's audit row).
 */
export async function createClientFor(
  deps: AppDeps,
  scope: Scope,
  input: OwnClientCreateInput,
  grantable: ReadonlySet<string>,
  inSameTx?: InSameTx<ClientRecord>,
): Promise<ClientRecord> {
  const scopes = input.scopes ?? DEFAULT_CLIENT_SCOPES.filter((s) => grantable.has(s))
  requireGrantable(scopes, grantable)
  return createClient(
    deps,
    {
      organization_id: scope.organizationId,
      environment: scope.environment,
      label: input.label,
      scopes,
      jwks: input.jwks,
      ip_allowlist: input.ip_allowlist,
    },
    inSameTx,
  )
}

/** Changes a client of the scope (label, scopes, keys, allowlist), as the operator's PATCH does. `inSameTx`: as createClientFor's. */
export async function updateClientFor(
  deps: AppDeps,
  scope: Scope,
  id: string,
  input: ClientUpdateInput,
  grantable: ReadonlySet<string>,
  inSameTx?: InSameTx<ClientRecord>,
): Promise<ClientRecord> {
  const client = await ownClient(deps, scope, id)
  if (client.status === 'revoked') {
    throw new ApiError('invalid_parameter', {
      param: 'oauth_client_id',
      message: 'A revoked client cannot be changed; revocation is final.',
    })
  }
  requireManageable(client, grantable)
  if (input.scopes !== undefined) requireGrantable(input.scopes, grantable)
  return updateClient(deps, client.id, input, inSameTx)
}

/**
 * Revokes a client of the scope: immediate and final, as the operator's revoke. The caller's own client may be revoked
 * too. `inSameTx`: as createClientFor's; not called for a client already revoked.
 */
export async function revokeClientFor(
  deps: AppDeps,
  scope: Scope,
  id: string,
  grantable: ReadonlySet<string>,
  inSameTx?: InSameTx<ClientRecord>,
): Promise<ClientRecord> {
  const client = await ownClient(deps, scope, id)
  if (client.status === 'revoked') return client
  requireManageable(client, grantable)
  return revokeClient(deps, client.id, inSameTx)
}

export async function createOwnClient(
  deps: AppDeps,
  ctx: RequestCtx,
  input: OwnClientCreateInput,
): Promise<OAuthClientView> {
  return presentOwnClient(await createClientFor(deps, ctx, input, await grantableScopes(deps, ctx)))
}

export async function updateOwnClient(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  input: ClientUpdateInput,
): Promise<OAuthClientView> {
  return presentOwnClient(
    await updateClientFor(deps, ctx, id, input, await grantableScopes(deps, ctx)),
  )
}

export async function revokeOwnClient(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<OAuthClientView> {
  return presentOwnClient(await revokeClientFor(deps, ctx, id, await grantableScopes(deps, ctx)))
}
