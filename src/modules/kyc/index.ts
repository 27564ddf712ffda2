/** What the kyc module publishes to other modules: they import it only through this file. */
export { assertKycForProgram, kycRefusal } from './evidence.js'
// The console's cardholder page reports and lists attestations through the same use cases as /v1.
export { ATTESTATION_STATUSES, KycAttestationRequest, METHODS as KYC_METHODS } from './schemas.js'
export { listAttestations, recordAttestation } from './service.js'
