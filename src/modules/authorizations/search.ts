import type { AppDeps } from '../../app-deps.js'
import type { Scope } from '../../http/context.js'
import { idStartsWith } from '../../lib/id-prefix.js'

/** The ids of the caller's authorizations that start with `prefix` (a range of the scope's index), newest first. */
export async function authorizationsWithIdPrefix(
  deps: AppDeps,
  scope: Scope,
  prefix: string,
  limit = 20,
): Promise<string[]> {
  const rows = await deps.db
    .selectFrom('authorizations')
    .select('id')
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where(idStartsWith(prefix))
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
  return rows.map((row) => row.id)
}
