import type { Db } from '../../db/types.js'
import { defineHook } from '../../lib/slots.js'

/** What a closed card tells the modules that hang off it. */
export interface ClosedCard {
  id: string
  organization_id: string
  environment: string
}

/** What a module does inside the transaction that closes a card. */
export type CardClosedListener = (trx: Db, card: ClosedCard, now: Date) => Promise<void>

/** Told by cards inside the transaction that closes a card; answered by network tokens (its tokens are deleted). */
export const CARD_CLOSED = defineHook<CardClosedListener>('cardClosed', async () => {})
