import { CLOCK_TIME } from '../../lib/object-clock.js'
import { answer } from '../../lib/slots.js'
import { CLOCK_OF_CALLER } from '../cardholders/index.js'
import type { ServiceModule } from '../module.js'
import { registerClockRoutes } from './routes.js'
import { CLOCK_SWEEP_MS, clockOfCaller, clockTime, sweepClocks } from './service.js'

/**
 * Sandbox clocks (docs/sandbox-clocks.md): the simulator routes, the worker's finishing of interrupted advances and
 * deleting of clocks past their lifetime; answers the cardholders' question whether a clock_id is the caller's.
 */
export const clocksModule: ServiceModule = {
  name: 'clocks',
  routes: registerClockRoutes,
  schedules: [{ type: 'sandbox_clocks.sweep', everyMs: CLOCK_SWEEP_MS, run: sweepClocks }],
  hooks: [answer(CLOCK_OF_CALLER, clockOfCaller), answer(CLOCK_TIME, clockTime)],
}
