import { platform } from '../jobs/housekeeping.js'
import { accountsModule } from './accounts/index.js'
import { authenticationsModule } from './authentications/index.js'
import { authorizationsModule } from './authorizations/index.js'
import { cardholdersModule } from './cardholders/index.js'
import { cardsModule } from './cards/index.js'
import { disputesModule } from './disputes/index.js'
import { docsModule } from './docs/index.js'
import { esimModule } from './esim/index.js'
import { eventsModule } from './events/index.js'
import { kycModule } from './kyc/index.js'
import type { ServiceModule } from './module.js'
import { networkTokensModule } from './network-tokens/index.js'
import { oauthModule } from './oauth/index.js'
import { operatorModule } from './operator/index.js'
import { programsModule } from './programs/index.js'
import { reportsModule } from './reports/index.js'
import { transactionsModule } from './transactions/index.js'
import { webhooksModule } from './webhooks/index.js'

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
  eventsModule,
  webhooksModule,
  cardholdersModule,
  kycModule,
  accountsModule,
  esimModule,
  cardsModule,
  authorizationsModule,
  transactionsModule,
  networkTokensModule,
  authenticationsModule,
  disputesModule,
  reportsModule,
]
