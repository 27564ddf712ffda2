import type { AppDeps } from '../../app-deps.js'
import { json } from '../../db/types.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { applyBounds, OPERATOR_CTX, paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { changeAuthorization } from '../../http/token-cache.js'
import { newId } from '../../lib/ids.js'
import { validateAllowlist } from '../oauth/index.js'
import { presentProgram, type ProgramView } from '../programs/index.js'

export interface OrganizationView { object: 'organization'; id: string; name: string; created_at: string }

function presentOrganization(row: { id: string; name: string; created_at: Date }): OrganizationView {
  return { object: 'organization', id: row.id, name: row.name, created_at: iso(row.created_at)! }
}

export async function createOrganization(deps: AppDeps, name: string): Promise<OrganizationView> {
  const row = await deps.db.insertInto('organizations').values({ id: newId('org'), name }).returningAll().executeTakeFirstOrThrow()
  return presentOrganization(row)
}

export async function getOrganization(deps: AppDeps, id: string): Promise<OrganizationView> {
  const row = await deps.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst()
  if (!row) throw new ApiError('organization_not_found')
  return presentOrganization(row)
}

/** A page of the platform's organizations, oldest first. */
export async function listOrganizations(deps: AppDeps, page: PageParams): Promise<ListResult<OrganizationView>> {
  return paginate({
    ctx: OPERATOR_CTX, cursors: deps.cursors, url: '/operator/v1/organizations', page,
    sortKey: (r: { id: string }) => r.id,
    fetch: (bounds) => applyBounds(deps.db.selectFrom('organizations').selectAll(), bounds, 'id', 'asc').execute(),
    present: presentOrganization,
  })
}

/** A page of one organization's programs (both environments), oldest first. */
export async function listOrganizationPrograms(deps: AppDeps, organizationId: string, page: PageParams): Promise<ListResult<ProgramView>> {
  return paginate({
    ctx: OPERATOR_CTX, cursors: deps.cursors, url: '/operator/v1/programs', page,
    sortKey: (r: { id: string }) => r.id,
    fetch: (bounds) => applyBounds(deps.db.selectFrom('programs').selectAll().where('organization_id', '=', organizationId), bounds, 'id', 'asc').execute(),
    present: presentProgram,
  })
}

export interface NetworkPolicyView { object: 'network_policy'; organization_id: string; environment: string; ip_allowlist: string[] }

/** Sets the organization's allowlist for one environment; an empty list lifts the restriction. */
export async function putNetworkPolicy(deps: AppDeps, organizationId: string, environment: string, list: string[]): Promise<NetworkPolicyView> {
  await getOrganization(deps, organizationId)
  const cidrs = validateAllowlist(list, 'ip_allowlist')
  await changeAuthorization(deps.db, (trx) => trx.insertInto('network_policies')
    .values({ organization_id: organizationId, environment, ip_allowlist: json(cidrs) })
    .onConflict((oc) => oc.columns(['organization_id', 'environment']).doUpdateSet({ ip_allowlist: json(cidrs), updated_at: deps.clock.now() }))
    .execute())
  return { object: 'network_policy', organization_id: organizationId, environment, ip_allowlist: cidrs }
}
