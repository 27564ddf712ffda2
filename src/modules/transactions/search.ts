import type { AppDeps } from '../../app-deps.js'
import type { Scope } from '../../http/context.js'
import { scopedIdPrefix } from '../../lib/id-prefix.js'

/** The ids of the caller's transactions that start with `prefix` (a range of the scope's index), newest first. */
export async function transactionsWithIdPrefix(
  deps: AppDeps,
  scope: Scope,
  prefix: string,
  limit = 20,
): Promise<string[]> {
  const query = deps.db.selectFrom('transactions').select('id')
  const rows = await scopedIdPrefix(query, scope, prefix, limit).execute()
  return rows.map((row) => row.id)
}
