/** What the oauth module publishes to other modules: they import it only through this file. */
export { createClient, getClient, listClients, presentClient, revokeClient, updateClient, validateAllowlist } from './clients.js'
export { SCOPES } from './scopes.js'
export { createOrganization, getOrganization, listOrganizations, putNetworkPolicy } from './organizations.js'
export type { NetworkPolicyView, OrganizationView } from './organizations.js'
export { createClientFor, grantableScopes, ownClient, presentOwnClient, revokeClientFor, updateClientFor } from './own-clients.js'
