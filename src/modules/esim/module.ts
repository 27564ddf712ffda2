import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { answer } from '../../lib/slots.js'
import { TRAVEL_ESIM } from '../cards/index.js'
import { DELETE_ESIMS_OF, ESIM_VALIDITY_ON_CLOCK } from '../clocks/index.js'
import type { ServiceModule } from '../module.js'
import { AUTO_TOP_UP_JOB, runAutoTopUpJob } from './auto-top-up.js'
import { registerEsimRoutes } from './esims-routes.js'
import { registerEsimOperatorRoutes } from './operator-routes.js'
import { registerPackageAndOrderRoutes } from './routes.js'
import { SETTLE_EVERY_MS, SETTLE_SCHEDULE, settleOpenOrders } from './settlement.js'
import { registerEsimSimulatorRoutes } from './simulate-routes.js'
import { sweepUsage, USAGE_EVERY_MS, USAGE_SCHEDULE } from './usage.js'
import { travelEsim } from './travel.js'
import {
  esimValidityOnClock,
  sweepValidity,
  VALIDITY_EVERY_MS,
  VALIDITY_SCHEDULE,
} from './validity.js'
import { deleteEsimsOf } from './clock-deletion.js'

/** eSIM sales: catalogue, orders, profiles, top-ups, the lifecycle and its alerts, the sandbox network simulator and the operator's stock. */
function registerEsim(app: FastifyInstance, deps: AppDeps): void {
  registerPackageAndOrderRoutes(app, deps)
  registerEsimRoutes(app, deps)
  registerEsimSimulatorRoutes(app, deps)
  registerEsimOperatorRoutes(app, deps)
}

export const esimModule: ServiceModule = {
  name: 'esim',
  routes: registerEsim,
  jobs: { [AUTO_TOP_UP_JOB]: runAutoTopUpJob },
  // A card's travel mode names an eSIM (docs/cards.md, "Travel mode").
  // eSIM validity and its warnings under a sandbox clock run in the clock's advance (docs/sandbox-clocks.md).
  hooks: [
    answer(DELETE_ESIMS_OF, deleteEsimsOf),
    answer(TRAVEL_ESIM, travelEsim),
    answer(ESIM_VALIDITY_ON_CLOCK, esimValidityOnClock),
  ],
  schedules: [
    {
      type: SETTLE_SCHEDULE,
      everyMs: SETTLE_EVERY_MS,
      run: async (deps) => {
        await settleOpenOrders(deps)
      },
    },
    {
      type: USAGE_SCHEDULE,
      everyMs: USAGE_EVERY_MS,
      run: async (deps) => {
        // Two batches at a time: one applies while the other's statements travel (claims skip each other).
        await sweepUsage(deps, { parallel: deps.config.databaseUrl === null ? 1 : 2 })
      },
    },
    {
      type: VALIDITY_SCHEDULE,
      everyMs: VALIDITY_EVERY_MS,
      run: async (deps) => {
        await sweepValidity(deps)
      },
    },
  ],
}
