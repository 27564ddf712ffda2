import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import { registerOauth } from './oauth/routes.js'
import { registerOperator } from './operator/routes.js'
import { registerPrograms } from './programs/routes.js'
import { registerEvents } from './events/routes.js'
import { registerWebhooks } from './webhooks/routes.js'
import { registerCardholders } from './cardholders/routes.js'
import { registerKyc } from './kyc/routes.js'
import { registerAccounts } from './accounts/routes.js'
import { registerEsim } from './esim/index.js'
import { registerCards } from './cards/routes.js'
import { registerAuthorizations } from './authorizations/routes.js'
import { registerTransactions } from './transactions/routes.js'
import { registerNetworkTokens } from './network-tokens/routes.js'
import { registerAuthentications } from './authentications/routes.js'
import { registerDisputes } from './disputes/routes.js'
import { registerReports } from './reports/routes.js'

export type ModuleRegistration = (app: FastifyInstance, deps: AppDeps) => void | Promise<void>

/** Every module of the service, mounted in this order. */
export const MODULES: ModuleRegistration[] = [
  registerOauth,
  registerOperator,
  registerPrograms,
  registerEvents,
  registerWebhooks,
  registerCardholders,
  registerKyc,
  registerAccounts,
  registerEsim,
  registerCards,
  registerAuthorizations,
  registerTransactions,
  registerNetworkTokens,
  registerAuthentications,
  registerDisputes,
  registerReports,
]
