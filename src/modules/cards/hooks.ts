import type { Db } from '../../db/types.js'
import { defineHook } from '../../lib/slots.js'

/** What a closed card tells the modules that hang off it. */
export interface ClosedCard {
  id: string
  organization_id: string
  environment: string
}

/**
 * What a module does inside the transaction that closes a card: `now` is the card's time, its sandbox clock's when
 * its cardholder is on one (`clockId`, for the events that follow).
 */
export type CardClosedListener = (
  trx: Db,
  card: ClosedCard,
  now: Date,
  clockId?: string | null,
) => Promise<void>

/** Told by cards inside the transaction that closes a card; answered by network tokens (its tokens are deleted). */
export const CARD_CLOSED = defineHook<CardClosedListener>('cardClosed', async () => {})

/** What travel mode reads of an eSIM: whose it is, where it is, and until when its bundle is valid. */
export interface TravelEsim {
  id: string
  organization_id: string
  environment: string
  cardholder_id: string | null
  /** Its current country (null until the network reports one). */
  country: string | null
  /** When its bundle stops being valid; null while it is suspended or canceled. */
  valid_until: Date | null
}

/** The eSIM with this id, in any organization (the caller checks whose it is); null when there is none. */
export type TravelEsimLookup = (db: Db, esimId: string) => Promise<TravelEsim | null>

/** Asked by cards when travel mode names an eSIM; answered by the esim module (no eSIM is known without it). */
export const TRAVEL_ESIM = defineHook<TravelEsimLookup>('travelEsim', async () => null)
