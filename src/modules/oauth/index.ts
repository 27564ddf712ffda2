/** What the oauth module publishes to other modules: they import it only through this file. */
export { createClient, getClient, listClients, presentClient, revokeClient, updateClient, validateAllowlist } from './clients.js'
export { SCOPES } from './scopes.js'
export { OAUTH_ERROR_WHEN, OAUTH_STATUS, type OAuthErrorCode } from './oauth-error.js'
