import type { Db } from '../../db/types.js'
import { isId } from '../../lib/ids.js'
import type { TravelEsim } from '../cards/index.js'
import { findEsimShared, travelFacts } from './esims-repo.js'

/**
 * The cards module's `TRAVEL_ESIM`: the eSIM a card's travel mode names, read under a share lock so that a change of
 * its country or validity (which updates the cards following it) waits for the card's write, or is seen by it.
 */
export async function travelEsim(db: Db, esimId: string): Promise<TravelEsim | null> {
  const row = isId('esim', esimId) ? await findEsimShared(db, esimId) : undefined
  if (!row) return null
  return {
    ...travelFacts(row),
    organization_id: row.organization_id,
    environment: row.environment,
    cardholder_id: row.cardholder_id,
  }
}
