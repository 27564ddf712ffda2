import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import type { Scope } from '../../http/context.js'
import { presentCardholder, type CardholderView } from './service.js'

/**
 * The caller's cardholders whose email (compared case-insensitively, as its uniqueness is) or `reference` is
 * exactly `text`, newest first, at most `limit`: the console's search. Both are served by indexes of the table.
 */
export async function searchCardholders(
  deps: AppDeps,
  scope: Scope,
  text: string,
  limit = 20,
): Promise<CardholderView[]> {
  const value = text.trim()
  if (value === '' || value.length > 254) return []
  const rows = await deps.db
    .selectFrom('cardholders')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where((eb) =>
      eb.or([eb(sql`lower(email)`, '=', value.toLowerCase()), eb('reference', '=', value)]),
    )
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
  const now = deps.clock.now()
  return rows.map((row) => presentCardholder(row, now))
}
