import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import type { Scope } from '../../http/context.js'
import { scopedIdPrefix } from '../../lib/id-prefix.js'
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

/**
 * The caller's cardholders whose first name, last name or full name ("Ada Lovelace") is `text`, compared
 * case-insensitively, newest first, at most `limit`. No index serves a name: the read walks the scope's index
 * (organization, environment, id), newest first, and stops at `limit`.
 */
export async function searchCardholdersByName(
  deps: AppDeps,
  scope: Scope,
  text: string,
  limit = 20,
): Promise<CardholderView[]> {
  const value = text.trim().replace(/\s+/g, ' ').toLowerCase()
  if (value === '' || value.length > 200) return []
  const rows = await deps.db
    .selectFrom('cardholders')
    .selectAll()
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where((eb) =>
      eb.or([
        eb(sql`lower(first_name)`, '=', value),
        eb(sql`lower(last_name)`, '=', value),
        eb(sql`lower(first_name || ' ' || last_name)`, '=', value),
      ]),
    )
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
  const now = deps.clock.now()
  return rows.map((row) => presentCardholder(row, now))
}

/** The caller's cardholders whose id starts with `prefix` (a range of the scope's index), at most `limit`. */
export async function cardholdersWithIdPrefix(
  deps: AppDeps,
  scope: Scope,
  prefix: string,
  limit = 20,
): Promise<CardholderView[]> {
  const query = deps.db.selectFrom('cardholders').selectAll()
  const rows = await scopedIdPrefix(query, scope, prefix, limit).execute()
  const now = deps.clock.now()
  return rows.map((row) => presentCardholder(row, now))
}
