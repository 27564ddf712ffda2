import { PROCESSOR_PROFILES } from './catalog.js'
import { SimulatedProcessor, type SimDeps } from './sim-processor.js'

/**
 * `sim_basic`: no balance adjustments, account status or PIN; virtual cards only, one per cardholder;
 * runs its own identity checks; creates accounts asynchronously (`has_upstream_reference` false for a moment).
 */
export function createSimBasic(deps: SimDeps): SimulatedProcessor {
  return new SimulatedProcessor(PROCESSOR_PROFILES.sim_basic, {
    referencePrefix: 'sb',
    asyncAccounts: true,
    // Per-transaction, daily and monthly limits and an MCC block list: no weekly or lifetime windows, no allow lists, no country rules.
    spendControls: { intervals: ['per_authorization', 'daily', 'monthly'], lists: ['blocked_mccs'] },
  }, deps)
}
