import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { cardIdsOfCardholders } from '../cards/index.js'
import { deleteInBatches } from '../clocks/index.js'

/** A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the network tokens of its cardholders' cards. */
export async function deleteNetworkTokensOf(deps: AppDeps, cardholderIds: readonly string[]) {
  const cards = await cardIdsOfCardholders(deps.db, cardholderIds)
  if (cards.length === 0) return 0
  return deleteInBatches(deps.db, 'network_tokens', sql`card_id = ANY(${cards})`, 'id')
}
