import { platform } from '../jobs/housekeeping.js'
import { accountsModule } from './accounts/module.js'
import { authorizationRulesModule } from './authorization-rules/module.js'
import { authenticationsModule } from './authentications/module.js'
import { authorizationsModule } from './authorizations/module.js'
import { cardholdersModule } from './cardholders/module.js'
import { clocksModule } from './clocks/module.js'
import { cardsModule } from './cards/module.js'
import { consoleModule } from './console/module.js'
import { disputesModule } from './disputes/module.js'
import { docsModule } from './docs/module.js'
import { esimModule } from './esim/module.js'
import { eventsModule } from './events/module.js'
import { h5Module } from './h5/module.js'
import { kycModule } from './kyc/module.js'
import type { ServiceModule } from './module.js'
import { ledgerModule } from './ledger/module.js'
import { networkTokensModule } from './network-tokens/module.js'
import { oauthModule } from './oauth/module.js'
import { operatorModule } from './operator/module.js'
import { programsModule } from './programs/module.js'
import { reportsModule } from './reports/module.js'
import { transactionsModule } from './transactions/module.js'
import { usersModule } from './users/module.js'
import { webhooksModule } from './webhooks/module.js'

export type { ServiceModule } from './module.js'

/**
 * Every module of the service, routes mounted in this order. The one list the composition root reads:
 * `buildApp` mounts the routes, the runtime joins the hooks and the job registry (handlers and schedules)
 * the worker runs. The platform's own recurring work (housekeeping) comes first; it has no routes.
 */
export const MODULES: readonly ServiceModule[] = [
  platform,
  docsModule,
  oauthModule,
  operatorModule,
  programsModule,
  usersModule,
  eventsModule,
  webhooksModule,
  cardholdersModule,
  kycModule,
  accountsModule,
  ledgerModule,
  esimModule,
  h5Module,
  cardsModule,
  authorizationsModule,
  authorizationRulesModule,
  transactionsModule,
  networkTokensModule,
  authenticationsModule,
  disputesModule,
  clocksModule,
  reportsModule,
  consoleModule,
]
