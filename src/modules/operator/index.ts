/** What the operator module publishes to other modules: they import it only through this file. */
export { getOrganization } from './service.js'
export type { OrganizationView } from './service.js'
