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
  retrieveAuthorization,
  reverse,
} from './service.js'
export type { AuthorizationView } from './service.js'
export { authorizationsWithIdPrefix } from './search.js'
