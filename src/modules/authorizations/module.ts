import type { ServiceModule } from '../module.js'
import { EXPIRY_SWEEP_MS, expireDue } from './operations.js'
import { registerAuthorizations } from './routes.js'

/** Real-time authorizations and their simulator; pending ones past their expiry are swept. */
export const authorizationsModule: ServiceModule = {
  name: 'authorizations',
  routes: registerAuthorizations,
  schedules: [{ type: 'authorizations.expire', everyMs: EXPIRY_SWEEP_MS, run: async (deps) => { await expireDue(deps) } }],
}
