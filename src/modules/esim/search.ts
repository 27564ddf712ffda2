import type { AppDeps } from '../../app-deps.js'
import type { Scope } from '../../http/context.js'
import { scopedIdPrefix } from '../../lib/id-prefix.js'

/** What the console's search lists of an eSIM. */
export interface EsimMatch {
  id: string
  iccid: string
  status: string
}

/** The caller's eSIMs whose id starts with `prefix` (a range of the scope's index), newest first. */
export async function esimsWithIdPrefix(
  deps: AppDeps,
  scope: Scope,
  prefix: string,
  limit = 20,
): Promise<EsimMatch[]> {
  const query = deps.db.selectFrom('esims').select(['id', 'iccid', 'status'])
  return scopedIdPrefix(query, scope, prefix, limit).execute()
}

/** The ids of the caller's eSIM orders that start with `prefix` (a range of the scope's index), newest first. */
export async function ordersWithIdPrefix(
  deps: AppDeps,
  scope: Scope,
  prefix: string,
  limit = 20,
): Promise<string[]> {
  const query = deps.db.selectFrom('esim_orders').select('id')
  const rows = await scopedIdPrefix(query, scope, prefix, limit).execute()
  return rows.map((row) => row.id)
}

/**
 * The caller's eSIMs with this ICCID (19 or 20 digits: the unique index of iccid), or whose ICCID ends in
 * `digits` (6 to 18 digits, as printed on a plan's receipt: the scope's index walked newest first, at most
 * `limit`).
 */
export async function esimsByIccid(
  deps: AppDeps,
  scope: Scope,
  digits: string,
  limit = 20,
): Promise<EsimMatch[]> {
  if (!/^\d{6,20}$/.test(digits)) return []
  const base = deps.db
    .selectFrom('esims')
    .select(['id', 'iccid', 'status'])
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
  const query =
    digits.length >= 19
      ? base.where('iccid', '=', digits)
      : base.where('iccid', 'like', `%${digits}`)
  return query.orderBy('id', 'desc').limit(limit).execute()
}
