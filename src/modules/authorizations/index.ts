/** What the authorizations module publishes to other modules: they import it only through this file. */
// The console's authorization pages and sandbox tools call the same use cases as /v1.
export { DECLINE_REASONS } from './decide.js'
export type { DeclineReason } from './decide.js'
export {
  AUTHORIZATION_STATUSES,
  CaptureRequest,
  IncrementRequest,
  ReverseRequest,
  SimulateAuthorization,
} from './schemas.js'
export {
  authorize,
  capture,
  expire,
  increment,
  listAuthorizations,
  listRuleDecisions,
  retrieveAuthorization,
  RULE_DECISIONS_SCAN,
  reverse,
} from './service.js'
export type { AuthorizationView } from './service.js'
// The console's home draws these.
export {
  type AuthorizationActivity,
  type AuthorizationDay,
  authorizationActivity,
} from './activity.js'
// Backtests of authorization rules replay the stored authorizations (the STORED_AUTHORIZATIONS hook).
export { authorizationsToReplay } from './replay-reader.js'
// The console's card page shows what is left of each limit (GET /v1/cards/{id}/spend_limits).
export { cardSpendLimits } from './spend-limits-service.js'
export type { SpendLimitView } from './spend-limits-schemas.js'
export { authorizationsWithIdPrefix } from './search.js'
