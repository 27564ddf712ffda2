/** What the clocks module publishes to other modules: they import it only through this file. */
export {
  CLOCK_SWEEPS,
  ESIM_VALIDITY_ON_CLOCK,
  HOLD_EXPIRY_ON_CLOCK,
  SETTLEMENT_ON_CLOCK,
} from './hooks.js'
export type { ClockSweep, DueOnClock } from './hooks.js'
export { clockTimeSql } from './time-sql.js'
export {
  CLOCK_DELETIONS,
  DELETE_ACCOUNTS_OF,
  DELETE_AUTHENTICATIONS_OF,
  DELETE_AUTHORIZATIONS_OF,
  DELETE_CARDS_OF,
  DELETE_DISPUTES_OF,
  DELETE_ESIMS_OF,
  DELETE_H5_LINKS_OF,
  DELETE_KYC_OF,
  DELETE_LEDGER_OF,
  DELETE_NETWORK_TOKENS_OF,
  DELETE_RULE_STATE_OF,
  DELETE_TRANSACTIONS_OF,
  deleteInBatches,
} from './deletion.js'
export type { DeleteOfCardholders } from './deletion.js'
// The console's sandbox clock pages call the same use cases as /v1/simulate/clocks.
export {
  advanceClock,
  createClock,
  deleteClock,
  listClocks,
  retrieveClock,
} from './service.js'
// Reads that bound a time window by ids ask whether a scope has objects on clock time.
export { scopeHasClockObjects } from './repo.js'
export { SandboxClockAdvance, SandboxClockCreate } from './schemas.js'
export type { SandboxClockView } from './schemas.js'
