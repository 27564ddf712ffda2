import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import type { HookTable } from '../../lib/slots.js'
import { TRAVEL_ESIM, type TravelEsim } from './hooks.js'
import * as repo from './repo.js'
import type { CardView } from './schemas.js'

/** The travel columns of a card: off, or the eSIM it follows with that eSIM's country and validity copied. */
export type TravelColumns = Pick<
  repo.CardRow,
  'travel_esim_id' | 'travel_country' | 'travel_valid_until'
>

export const TRAVEL_OFF: TravelColumns = {
  travel_esim_id: null,
  travel_country: null,
  travel_valid_until: null,
}

/** Whether the card's travel eSIM has a valid bundle at `now` (its country is then allowed). */
export function travelActive(card: Pick<TravelColumns, 'travel_valid_until'>, now: Date): boolean {
  const until = card.travel_valid_until
  return until !== null && new Date(until).getTime() > now.getTime()
}

/** `travel_mode` as the card shows it (null: off). */
export function presentTravelMode(card: TravelColumns, now: Date): CardView['travel_mode'] {
  if (card.travel_esim_id === null) return null
  return {
    esim_id: card.travel_esim_id,
    country: card.travel_country,
    active: travelActive(card, now),
  }
}

/**
 * The columns a `travel_mode` asked on create or PATCH sets: null turns it off; an eSIM must be the caller's
 * (`esim_not_found` naming `travel_mode.esim_id` otherwise) and its cardholder's (`invalid_parameter`).
 */
export async function travelColumnsFor(
  db: Db,
  hooks: HookTable,
  scope: Scope,
  cardholderId: string,
  asked: { esim_id: string } | null,
): Promise<TravelColumns> {
  if (asked === null) return TRAVEL_OFF
  const param = 'travel_mode.esim_id'
  const esim = requireOwned(
    await hooks.get(TRAVEL_ESIM)(db, asked.esim_id),
    scope,
    'esim_not_found',
    param,
  )
  if (esim.cardholder_id !== cardholderId)
    throw new ApiError('invalid_parameter', {
      param,
      message: `eSIM ${esim.id} is not one of cardholder ${cardholderId}'s: travel mode follows an eSIM of the card's own cardholder.`,
    })
  return columnsOf(esim)
}

function columnsOf(esim: Pick<TravelEsim, 'id' | 'country' | 'valid_until'>): TravelColumns {
  return {
    travel_esim_id: esim.id,
    travel_country: esim.country,
    travel_valid_until: esim.valid_until,
  }
}

/**
 * The cards in travel mode on this eSIM follow its country and validity: called by the eSIM's changes (location,
 * validity, suspension, cancel) in their own transaction, so an authorization never sees one without the other.
 */
export async function followTravelEsim(
  trx: Db,
  esim: Pick<TravelEsim, 'id' | 'country' | 'valid_until'>,
): Promise<void> {
  await repo.setTravelColumns(trx, esim.id, {
    travel_country: esim.country,
    travel_valid_until: esim.valid_until,
  })
}
