/** What the disputes module publishes to other modules: they import it only through this file. */
// The console's dispute pages and sandbox tools call the same use cases as /v1.
export { DISPUTE_STATUSES } from './lifecycle.js'
export { DisputeCreate, DisputeResolve } from './schemas.js'
export type { DisputeView } from './schemas.js'
export {
  createDispute,
  listDisputes,
  requireDispute,
  resolveDispute,
  retrieveDispute,
  withdrawDispute,
} from './service.js'
