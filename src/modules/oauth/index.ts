/** What the oauth module publishes to other modules: they import it only through this file. */
export { createClient, getClient, hasActiveClient, listClients, presentClient, revokeClient, updateClient, validateAllowlist } from './clients.js'
export { SCOPES } from './scopes.js'
export { createOrganization, getOrganization, listOrganizations, putNetworkPolicy } from './organizations.js'
export type { NetworkPolicyView, OrganizationView } from './organizations.js'
export { OAUTH_ERROR_WHEN, OAUTH_STATUS, type OAuthErrorCode } from './oauth-error.js'
