import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import type { ServiceModule } from '../module.js'
import { registerEsimRoutes } from './esims-routes.js'
import { registerEsimOperatorRoutes } from './operator-routes.js'
import { registerPackageAndOrderRoutes } from './routes.js'
import { SETTLE_EVERY_MS, SETTLE_SCHEDULE, settleOpenOrders } from './settlement.js'
import { registerEsimSimulatorRoutes } from './simulate-routes.js'

/** eSIM sales: catalogue, orders, profiles, top-ups, the sandbox network simulator and the operator's stock. */
function registerEsim(app: FastifyInstance, deps: AppDeps): void {
  registerPackageAndOrderRoutes(app, deps)
  registerEsimRoutes(app, deps)
  registerEsimSimulatorRoutes(app, deps)
  registerEsimOperatorRoutes(app, deps)
}

export const esimModule: ServiceModule = {
  name: 'esim',
  routes: registerEsim,
  schedules: [
    {
      type: SETTLE_SCHEDULE,
      everyMs: SETTLE_EVERY_MS,
      run: async (deps) => {
        await settleOpenOrders(deps)
      },
    },
  ],
}
