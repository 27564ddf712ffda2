import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { deleteInBatches } from '../clocks/index.js'
import { cardIdsOfCardholders } from './of-cardholder.js'

/**
 * A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): its cardholders' cards with their
 * secrets (PIN keys, reveal sessions, the audit of secret reads).
 */
export async function deleteCardsOf(deps: AppDeps, cardholderIds: readonly string[]) {
  const cards = await cardIdsOfCardholders(deps.db, cardholderIds)
  if (cards.length === 0) return 0
  const ofCards = sql`card_id = ANY(${cards})`
  let n = await deleteInBatches(deps.db, 'card_pin_keys', ofCards, 'id')
  n += await deleteInBatches(deps.db, 'card_reveal_sessions', ofCards, 'id')
  n += await deleteInBatches(deps.db, 'card_secret_audit', ofCards, 'id')
  return n + (await deleteInBatches(deps.db, 'cards', sql`id = ANY(${cards})`, 'id'))
}
