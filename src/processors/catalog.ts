import type { Capability } from '../http/capability.js'

export const ALL_CAPABILITIES: Capability[] = ['account_credit', 'account_debit', 'account_status', 'card_pin', 'card_details', 'network_tokens', 'three_d_secure']

/** What a processor can do: a program bound to it inherits these traits when the operator creates it. */
export interface ProcessorProfile {
  name: string
  capabilities: Capability[]
  formFactors: string[]
  cardTypes: string[]
  cardBrand: 'visa' | 'mastercard'
  bin: string
  oneCardPerCardholder: boolean
  identityEvidenceRequired: boolean
  addressChangeRequiresKyc: boolean
  kycInitialStatus: 'not_started' | 'pending'
}

export const PROCESSOR_PROFILES: Record<string, ProcessorProfile> = {
  sim_full: {
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
  sim_basic: {
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
}

export const PROCESSOR_NAMES = Object.keys(PROCESSOR_PROFILES)
