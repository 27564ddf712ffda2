import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { OPERATOR_CTX, paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { changeAuthorization } from '../../http/token-cache.js'
import { newId } from '../../lib/ids.js'
import { validateAllowlist } from './clients.js'
import * as repo from './repo.js'

/**
 * Organizations and their network policies: the oauth module owns them, because they decide who may hold a
 * token and from where. The operator API reaches them through this module's index.ts.
 */
export interface OrganizationView {
  object: 'organization'
  id: string
  name: string
  created_at: string
}

function presentOrganization(row: repo.OrganizationRow): OrganizationView {
  return { object: 'organization', id: row.id, name: row.name, created_at: iso(row.created_at)! }
}

/** `inSameTx`: the caller's work in the creation's transaction (the console's audit row). */
export async function createOrganization(
  deps: AppDeps,
  name: string,
  inSameTx?: InSameTx<OrganizationView>,
): Promise<OrganizationView> {
  return withTx(deps.db, async (trx) => {
    const organization = presentOrganization(
      await repo.insertOrganization(trx, { id: newId('org'), name }),
    )
    await inSameTx?.(trx, organization)
    return organization
  })
}

/** The names of these organizations (those that exist), by id: one read for a list that shows many. */
export async function organizationNames(
  db: Db,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const rows = await repo.findOrganizations(db, [...new Set(ids)])
  return new Map(rows.map((r) => [r.id, r.name]))
}

export async function getOrganization(deps: AppDeps, id: string): Promise<OrganizationView> {
  const row = await repo.findOrganization(deps.db, id)
  if (!row) throw new ApiError('organization_not_found')
  return presentOrganization(row)
}

/** A page of the platform's organizations, oldest first. */
export async function listOrganizations(
  deps: AppDeps,
  page: PageParams,
): Promise<ListResult<OrganizationView>> {
  return paginate({
    ctx: OPERATOR_CTX,
    cursors: deps.cursors,
    url: '/operator/v1/organizations',
    page,
    sortKey: (r: repo.OrganizationRow) => r.id,
    fetch: (bounds) => repo.listOrganizations(deps.db, bounds),
    present: presentOrganization,
  })
}

export interface NetworkPolicyView {
  object: 'network_policy'
  organization_id: string
  environment: string
  ip_allowlist: string[]
}

/**
 * Sets the organization's allowlist for one environment; an empty list lifts the restriction. Cached tokens are
 * dropped. `inSameTx`: the caller's work in the change's transaction (the console's audit row).
 */
export async function putNetworkPolicy(
  deps: AppDeps,
  organizationId: string,
  environment: string,
  list: string[],
  inSameTx?: InSameTx<NetworkPolicyView>,
): Promise<NetworkPolicyView> {
  await getOrganization(deps, organizationId)
  const cidrs = validateAllowlist(list, 'ip_allowlist')
  const policy: NetworkPolicyView = {
    object: 'network_policy',
    organization_id: organizationId,
    environment,
    ip_allowlist: cidrs,
  }
  await changeAuthorization(deps.db, async (trx) => {
    await repo.upsertNetworkPolicy(trx, organizationId, environment, cidrs, deps.clock.now())
    await inSameTx?.(trx, policy)
  })
  return policy
}

/** A network policy as stored, with when it last changed (the operator's pages). */
export interface StoredNetworkPolicy {
  organization_id: string
  environment: string
  ip_allowlist: string[]
  updated_at: Date
}

/** The policies of one organization (an environment without a row has no restriction), or, with null, every restricting one (at most `limit`). */
export async function listNetworkPolicies(
  db: Db,
  organizationId: string | null,
  limit = 200,
): Promise<StoredNetworkPolicy[]> {
  return repo.listNetworkPolicies(db, organizationId, limit)
}
