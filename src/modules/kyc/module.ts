import type { ServiceModule } from '../module.js'
import { KYC_EXPIRY_JOB, runKycExpiry } from './expiry.js'
import { registerKyc } from './routes.js'
import { answer } from '../../lib/slots.js'
import { DELETE_KYC_OF } from '../clocks/index.js'
import { deleteKycOf } from './clock-deletion.js'

/** KYC attestations and identity documents; `kyc.expiry` announces an attestation's expiry. */
export const kycModule: ServiceModule = {
  name: 'kyc',
  routes: registerKyc,
  jobs: { [KYC_EXPIRY_JOB]: runKycExpiry },
  hooks: [answer(DELETE_KYC_OF, deleteKycOf)],
}
