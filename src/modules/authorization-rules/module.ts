import type { ServiceModule } from '../module.js'
import { registerAuthorizationRules } from './routes.js'

/** Authorization rules: velocity limits, conditions and merchant locks on an organization's cards. */
export const authorizationRulesModule: ServiceModule = {
  name: 'authorization-rules',
  routes: registerAuthorizationRules,
}
