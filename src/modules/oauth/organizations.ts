import type { AppDeps } from '../../app-deps.js'
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
export interface OrganizationView { object: 'organization'; id: string; name: string; created_at: string }

function presentOrganization(row: repo.OrganizationRow): OrganizationView {
  return { object: 'organization', id: row.id, name: row.name, created_at: iso(row.created_at)! }
}

export async function createOrganization(deps: AppDeps, name: string): Promise<OrganizationView> {
  return presentOrganization(await repo.insertOrganization(deps.db, { id: newId('org'), name }))
}

export async function getOrganization(deps: AppDeps, id: string): Promise<OrganizationView> {
  const row = await repo.findOrganization(deps.db, id)
  if (!row) throw new ApiError('organization_not_found')
  return presentOrganization(row)
}

/** A page of the platform's organizations, oldest first. */
export async function listOrganizations(deps: AppDeps, page: PageParams): Promise<ListResult<OrganizationView>> {
  return paginate({
    ctx: OPERATOR_CTX, cursors: deps.cursors, url: '/operator/v1/organizations', page,
    sortKey: (r: repo.OrganizationRow) => r.id,
    fetch: (bounds) => repo.listOrganizations(deps.db, bounds),
    present: presentOrganization,
  })
}

export interface NetworkPolicyView { object: 'network_policy'; organization_id: string; environment: string; ip_allowlist: string[] }

/** Sets the organization's allowlist for one environment; an empty list lifts the restriction. Cached tokens are dropped. */
export async function putNetworkPolicy(deps: AppDeps, organizationId: string, environment: string, list: string[]): Promise<NetworkPolicyView> {
  await getOrganization(deps, organizationId)
  const cidrs = validateAllowlist(list, 'ip_allowlist')
  await changeAuthorization(deps.db, (trx) => repo.upsertNetworkPolicy(trx, organizationId, environment, cidrs, deps.clock.now()))
  return { object: 'network_policy', organization_id: organizationId, environment, ip_allowlist: cidrs }
}
