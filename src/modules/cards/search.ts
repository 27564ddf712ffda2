import type { AppDeps } from '../../app-deps.js'
import type { Scope } from '../../http/context.js'
import { scopedIdPrefix } from '../../lib/id-prefix.js'

/** What the console's search lists of a card: enough to name it as `brand •••• last4`. */
export interface CardMatch {
  id: string
  brand: string
  last4: string | null
  status: string
  cardholder_id: string
}

const COLUMNS = ['id', 'brand', 'last4', 'status', 'cardholder_id'] as const

/** The caller's cards whose id starts with `prefix` (a range of the scope's index), newest first. */
export async function cardsWithIdPrefix(
  deps: AppDeps,
  scope: Scope,
  prefix: string,
  limit = 20,
): Promise<CardMatch[]> {
  return scopedIdPrefix(deps.db.selectFrom('cards').select(COLUMNS), scope, prefix, limit).execute()
}

/**
 * The caller's cards whose number ends in `last4`, newest first, at most `limit`. No index serves last4: the
 * read walks the scope's index (organization, environment, id) newest first and stops at `limit`.
 */
export async function cardsEndingIn(
  deps: AppDeps,
  scope: Scope,
  last4: string,
  limit = 50,
): Promise<CardMatch[]> {
  if (!/^\d{4}$/.test(last4)) return []
  return deps.db
    .selectFrom('cards')
    .select(COLUMNS)
    .where('organization_id', '=', scope.organizationId)
    .where('environment', '=', scope.environment)
    .where('last4', '=', last4)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute()
}
