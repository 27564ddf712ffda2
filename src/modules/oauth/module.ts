import type { ServiceModule } from '../module.js'
import { findAccessTokenGrant, purgeExpiredCredentials } from './repo.js'
import { registerClientRoutes } from './client-routes.js'
import { registerOauth } from './routes.js'

/** How often redeemed assertion ids and expired access tokens are removed. */
const PURGE_EVERY_MS = 60_000

/**
 * The token endpoint, the clients' keys and an organization's management of its own clients (`/v1/oauth_clients`);
 * what has expired of them is purged on a schedule. Answers the token lookup of every authenticated request (http
 * asks it through `deps.hooks.accessTokenGrant`).
 */
export const oauthModule: ServiceModule = {
  name: 'oauth',
  routes: (app, deps) => {
    registerOauth(app, deps)
    registerClientRoutes(app, deps)
  },
  schedules: [{ type: 'oauth.purge_credentials', everyMs: PURGE_EVERY_MS, run: (deps) => purgeExpiredCredentials(deps.db, deps.clock.now()) }],
  hooks: { accessTokenGrant: findAccessTokenGrant },
}
