/** What the cards module publishes to other modules: they import it only through this file. */
export {
  CARD_CLOSED,
  type ClosedCard,
  TRAVEL_ESIM,
  type TravelEsim,
  type TravelEsimLookup,
} from './hooks.js'
export { followTravelEsim, travelActive } from './travel.js'
export { cardsCte, cardUnchangedSql } from './read-plan.js'
export { hasCard, requireCard, requireCardOnClock, requireCardProgram } from './service.js'
export type { CardRow } from './service.js'
// The console's card pages call the same use cases as /v1 (never PIN or card details).
export { issueNow } from './issuance.js'
export { changeStatus, shipCard } from './operations.js'
export type { StatusActor } from './operations.js'
// The traveller page (h5) shows a card's details through a session of its own origin.
export { createOwnRevealSession } from './reveal-sessions.js'
export { replaceCard } from './replacement.js'
export { CardCreate, CardReplace, CardUpdate, ShipRequest, SPENDING_INTERVALS } from './schemas.js'
export type { CardView } from './schemas.js'
export { createCard, listCards, retrieveCard, updateCard } from './service.js'
export {
  brandName,
  type CardLabel,
  maskedCard,
  cardLabels,
} from './labels.js'
export {
  cardholderOfCardSql,
  cardIdsOfCardholders,
  cardIdsOnClock,
  clockOfCardSql,
} from './of-cardholder.js'
export { cardsEndingIn, cardsWithIdPrefix, type CardMatch } from './search.js'
