import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { cardIdsOfCardholders } from '../cards/index.js'
import { deleteInBatches } from '../clocks/index.js'

/**
 * A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the authorizations of its cardholders'
 * cards. The authorization endpoint's attempts stay: like events they are a log, purged after 30 days.
 */
export async function deleteAuthorizationsOf(deps: AppDeps, cardholderIds: readonly string[]) {
  const cards = await cardIdsOfCardholders(deps.db, cardholderIds)
  if (cards.length === 0) return 0
  return deleteInBatches(deps.db, 'authorizations', sql`card_id = ANY(${cards})`, 'id')
}
