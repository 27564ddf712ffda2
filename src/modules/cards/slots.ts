import type { Db } from '../../db/types.js'
import { isLive, type CardStatus } from './lifecycle.js'
import * as repo from './repo.js'

/**
 * A card leaving the live statuses gives up its one-card slot; when it has a live replacement, that
 * replacement takes the slot in the same transaction (the unique index never sees two holders).
 */
export async function releaseSlot(trx: Db, card: repo.CardRow, now: Date): Promise<repo.CardRow> {
  if (!card.holds_card_slot) return card
  const released = await repo.updateCard(trx, card.id, { holds_card_slot: false, updated_at: now })
  if (released.replaced_by) {
    const successor = await repo.lockCard(trx, released.replaced_by)
    if (successor && !successor.holds_card_slot && isLive(successor.status as CardStatus)) {
      await repo.updateCard(trx, successor.id, { holds_card_slot: true })
    }
  }
  return released
}
