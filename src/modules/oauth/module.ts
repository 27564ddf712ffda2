import { ACCESS_TOKEN_GRANT } from '../../http/auth.js'
import { purgeSchedule } from '../../jobs/retention.js'
import { answer } from '../../lib/slots.js'
import type { ServiceModule } from '../module.js'
import { registerClientRoutes } from './client-routes.js'
import { OAUTH_PURGE_EVERY_MS, OAUTH_PURGES } from './purge.js'
import { findAccessTokenGrant } from './repo.js'
import { registerOauth } from './routes.js'

/**
 * The token endpoint, the clients' keys and an organization's management of its own clients (`/v1/oauth_clients`);
 * what has expired of them is purged on a schedule. Answers the token lookup of every authenticated request (http
 * asks it through `ACCESS_TOKEN_GRANT`).
 */
export const oauthModule: ServiceModule = {
  name: 'oauth',
  routes: (app, deps) => {
    registerOauth(app, deps)
    registerClientRoutes(app, deps)
  },
  purges: OAUTH_PURGES,
  schedules: [purgeSchedule('oauth.purge_credentials', OAUTH_PURGE_EVERY_MS, OAUTH_PURGES)],
  hooks: [answer(ACCESS_TOKEN_GRANT, findAccessTokenGrant)],
}
