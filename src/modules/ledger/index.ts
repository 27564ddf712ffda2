/** What the ledger module publishes to other modules: they import it only through this file. */
export {
  accountsCte,
  applySettledMovement,
  captureHold,
  entriesCreatedIn,
  holdsCtes,
  incrementHold,
  lockAccountRow,
  releaseHold,
  releaseHolds,
} from './service.js'
export type { HoldRelease } from './service.js'
export type { EntryView } from './service.js'
// The console's account page credits and lists entries through the same use cases as /v1.
export { AccountAdjustmentRequest } from './schemas.js'
export { adjustBalance, listEntries } from './service.js'
