import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import './types.js'

/** The full names of the caller's cardholders among `ids` (one read by primary key): what lists show for an id. */
export async function cardholderNames(
  db: Db,
  scope: Scope,
  ids: readonly (string | null | undefined)[],
): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => Boolean(id)))]
  if (wanted.length === 0) return new Map()
  const rows = await db
    .selectFrom('cardholders')
    .select(['id', 'first_name', 'last_name'])
    .where('id', 'in', wanted)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .execute()
  return new Map(rows.map((r) => [r.id, `${r.first_name} ${r.last_name}`.trim()]))
}
