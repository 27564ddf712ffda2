/** What the clocks module publishes to other modules: they import it only through this file. */
export { HOLDS_DUE_ON_CLOCK } from './hooks.js'
export type { DueOnClock } from './hooks.js'
