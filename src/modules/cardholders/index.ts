/** What the cardholders module publishes to other modules: they import it only through this file. */
export { ADDRESS_CHANGE_GUARD, CARDHOLDER_CARDS, CLOCK_OF_CALLER } from './hooks.js'
export { mergeMetadata } from './metadata.js'
export { effectiveKycStatus, normalizeAddress, presentAddress } from './present.js'
export { Address, AddressInput } from './schemas.js'
export {
  applyKycOutcome,
  cardholderHasAddress,
  cardholderHasIdentityDocument,
  claimKycExpiry,
  findCardholderForJob,
  lockCardholder,
  presentCardholder,
  requireCardholder,
} from './service.js'
export type { CardholderRow } from './service.js'
export type { AddressValue } from './types.js'
// The console's cardholder pages call the same use cases as /v1.
export { CardholderCreateRequest, IDENTITY_DOCUMENT_TYPES, KYC_STATUSES } from './schemas.js'
export {
  createCardholder,
  listCardholderCards,
  listCardholders,
  retrieveCardholder,
} from './service.js'
export type { CardholderView } from './service.js'
export { cardholdersWithIdPrefix, searchCardholders, searchCardholdersByName } from './search.js'
export { cardholderNames } from './names.js'
export {
  cardholdersOnClock,
  clockOfCardholderSql,
  deleteCardholdersOnClock,
} from './clock.js'
