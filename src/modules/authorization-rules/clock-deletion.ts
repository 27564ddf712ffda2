import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { accountIdsOfCardholders } from '../accounts/index.js'
import { cardIdsOfCardholders } from '../cards/index.js'
import { deleteInBatches } from '../clocks/index.js'

/**
 * A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the last hour's activity of its
 * cardholders' cards, and the velocity counters whose aggregate is one of those cards, their accounts or the
 * cardholders themselves (a counter's key ends with its aggregate's id). The rules stay: they are the
 * organization's, and name the objects only in their scope.
 */
export async function deleteRuleStateOf(deps: AppDeps, cardholderIds: readonly string[]) {
  if (cardholderIds.length === 0) return 0
  const cards = await cardIdsOfCardholders(deps.db, cardholderIds)
  const accounts = await accountIdsOfCardholders(deps.db, cardholderIds)
  const activity =
    cards.length === 0
      ? 0
      : await deleteInBatches(
          deps.db,
          'authorization_rule_activity',
          sql`card_id = ANY(${cards})`,
          'card_id',
        )
  const aggregates = [...cardholderIds, ...cards, ...accounts]
  const counters = await deleteInBatches(
    deps.db,
    'authorization_rule_counters',
    sql`split_part(key, ':', 3) = ANY(${aggregates})`,
    'key',
  )
  return activity + counters
}
