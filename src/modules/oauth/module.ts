import type { ServiceModule } from '../module.js'
import { purgeExpiredCredentials } from './repo.js'
import { registerOauth } from './routes.js'

/** How often redeemed assertion ids and expired access tokens are removed. */
const PURGE_EVERY_MS = 60_000

/** The token endpoint and the clients' keys; what has expired of them is purged on a schedule. */
export const oauthModule: ServiceModule = {
  name: 'oauth',
  routes: registerOauth,
  schedules: [{ type: 'oauth.purge_credentials', everyMs: PURGE_EVERY_MS, run: (deps) => purgeExpiredCredentials(deps.db, deps.clock.now()) }],
}
