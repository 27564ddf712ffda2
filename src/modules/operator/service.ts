import type { AppDeps } from '../../app-deps.js'
import { json } from '../../db/types.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { changeAuthorization } from '../../http/token-cache.js'
import { newId } from '../../lib/ids.js'
import { validateAllowlist } from '../oauth/clients.js'

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

export async function listOrganizations(deps: AppDeps): Promise<OrganizationView[]> {
  const rows = await deps.db.selectFrom('organizations').selectAll().orderBy('id').execute()
  return rows.map(presentOrganization)
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
