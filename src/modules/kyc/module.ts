import type { ServiceModule } from '../module.js'
import { KYC_EXPIRY_JOB, runKycExpiry } from './expiry.js'
import { registerKyc } from './routes.js'

/** KYC attestations and identity documents; `kyc.expiry` announces an attestation's expiry. */
export const kycModule: ServiceModule = {
  name: 'kyc',
  routes: registerKyc,
  jobs: { [KYC_EXPIRY_JOB]: runKycExpiry },
}
