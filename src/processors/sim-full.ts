import { ALL_CAPABILITIES, type ProcessorDefinition } from './port.js'
import { SimulatedProcessor } from './sim-processor.js'

/**
 * `sim_full`: every capability, both form factors, accounts opened at once at the processor, every
 * spending control and every simulator feed.
 */
export const simFull: ProcessorDefinition = {
  profile: {
    name: 'sim_full',
    capabilities: ALL_CAPABILITIES,
    formFactors: ['virtual', 'physical'],
    cardTypes: ['debit', 'prepaid'],
    cardBrand: 'visa',
    bin: '42424200',
    oneCardPerCardholder: false,
    identityEvidenceRequired: false,
    addressChangeRequiresKyc: false,
    kycInitialStatus: 'not_started',
  },
  spendControls: {
    intervals: ['per_authorization', 'daily', 'weekly', 'monthly', 'all_time'],
    lists: ['allowed_mccs', 'blocked_mccs', 'allowed_countries', 'blocked_countries'],
  },
  simulatorFeeds: ['network_tokens', 'three_d_secure', 'disputes'],
  create: (deps) =>
    new SimulatedProcessor(
      simFull.profile,
      {
        referencePrefix: 'sf',
        asyncAccounts: false,
        spendControls: simFull.spendControls,
      },
      deps,
    ),
}
