import type { ServiceModule } from '../module.js'
import { EXPIRY_SWEEP_MS, expireDue } from './operations.js'
import { findAuthorization } from './repo.js'
import { registerAuthorizations } from './routes.js'

/** Real-time authorizations and their simulator; pending ones past their expiry are swept. Answers the list filters' lookup of an authorization_id. */
export const authorizationsModule: ServiceModule = {
  name: 'authorizations',
  routes: registerAuthorizations,
  schedules: [{ type: 'authorizations.expire', everyMs: EXPIRY_SWEEP_MS, run: async (deps) => { await expireDue(deps) } }],
  hooks: { authorizationScope: findAuthorization },
}
