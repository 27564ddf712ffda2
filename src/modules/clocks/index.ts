/** What the clocks module publishes to other modules: they import it only through this file. */
export {
  CLOCK_SWEEPS,
  ESIM_VALIDITY_ON_CLOCK,
  HOLD_EXPIRY_ON_CLOCK,
  SETTLEMENT_ON_CLOCK,
} from './hooks.js'
export type { ClockSweep, DueOnClock } from './hooks.js'
