/** What the oauth module publishes to other modules: they import it only through this file. */
export {
  createClient,
  getClient,
  hasActiveClient,
  listClients,
  listPlatformClients,
  presentClient,
  revokeClient,
  updateClient,
  validateAllowlist,
} from './clients.js'
export type { ClientFilter } from './clients.js'
export { MAX_CLIENT_KEYS } from './jwks.js'
export type { ClientRecord } from './repo.js'
export { DEFAULT_CLIENT_SCOPES, SCOPES } from './scopes.js'
export {
  createOrganization,
  getOrganization,
  listNetworkPolicies,
  listOrganizations,
  organizationNames,
  putNetworkPolicy,
} from './organizations.js'
export type { NetworkPolicyView, OrganizationView, StoredNetworkPolicy } from './organizations.js'
export { OAUTH_ERROR_WHEN, OAUTH_STATUS, type OAuthErrorCode } from './oauth-error.js'
export {
  createClientFor,
  grantableScopes,
  listClientsOf,
  memberGrantableScopes,
  ownClient,
  presentOwnClient,
  revokeClientFor,
  updateClientFor,
} from './own-clients.js'
