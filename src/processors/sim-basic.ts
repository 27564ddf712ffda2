import type { ProcessorDefinition } from './port.js'
import { SimulatedProcessor } from './sim-processor.js'

/**
 * `sim_basic`: no balance adjustments, account status or PIN; virtual cards only, one per cardholder;
 * runs its own identity checks; creates accounts asynchronously (`has_upstream_reference` false for a moment).
 */
export const simBasic: ProcessorDefinition = {
  profile: {
    name: 'sim_basic',
    capabilities: ['card_details', 'network_tokens', 'three_d_secure'],
    formFactors: ['virtual'],
    cardTypes: ['prepaid'],
    cardBrand: 'mastercard',
    bin: '52525200',
    oneCardPerCardholder: true,
    identityEvidenceRequired: true,
    addressChangeRequiresKyc: true,
    kycInitialStatus: 'pending',
  },
  // Per-transaction, daily and monthly limits and an MCC block list: no weekly or lifetime windows, no allow lists, no country rules.
  spendControls: { intervals: ['per_authorization', 'daily', 'monthly'], lists: ['blocked_mccs'] },
  // No injector for tokens, 3-D Secure or disputes (decisions.md, Sandbox simulator), as a real processor
  // without those feeds would: its programs keep the network_tokens and three_d_secure capabilities.
  simulatorFeeds: [],
  create: (deps) =>
    new SimulatedProcessor(
      simBasic.profile,
      {
        referencePrefix: 'sb',
        asyncAccounts: true,
        spendControls: simBasic.spendControls,
      },
      deps,
    ),
}
