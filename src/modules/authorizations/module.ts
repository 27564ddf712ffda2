import type { ServiceModule } from '../module.js'
import { ATTEMPT_PURGE_EVERY_MS, purgeExpiredAttempts } from './endpoint-service.js'
import { EXPIRY_SWEEP_MS, expireDue } from './operations.js'
import { findAuthorization } from './repo.js'
import { registerAuthorizations } from './routes.js'

/** Real-time authorizations, their simulator and the integrator's authorization endpoint; pending ones past their expiry are swept, endpoint attempts past 30 days purged. Answers the list filters' lookup of an authorization_id. */
export const authorizationsModule: ServiceModule = {
  name: 'authorizations',
  routes: registerAuthorizations,
  schedules: [
    { type: 'authorizations.expire', everyMs: EXPIRY_SWEEP_MS, run: async (deps) => { await expireDue(deps) } },
    { type: 'authorizations.purge_endpoint_attempts', everyMs: ATTEMPT_PURGE_EVERY_MS, run: async (deps) => { await purgeExpiredAttempts(deps) } },
  ],
  hooks: { authorizationScope: findAuthorization },
}
