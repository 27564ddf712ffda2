import { PROCESSOR_PROFILES } from './catalog.js'
import { SimulatedProcessor, type SimDeps } from './sim-processor.js'

/** `sim_full`: every capability, both form factors, accounts opened at once at the processor. */
export function createSimFull(deps: SimDeps): SimulatedProcessor {
  return new SimulatedProcessor(PROCESSOR_PROFILES.sim_full, {
    referencePrefix: 'sf',
    asyncAccounts: false,
    spendControls: {
      intervals: ['per_authorization', 'daily', 'weekly', 'monthly', 'all_time'],
      lists: ['allowed_mccs', 'blocked_mccs', 'allowed_countries', 'blocked_countries'],
    },
  }, deps)
}
