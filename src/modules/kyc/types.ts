import type { Json, Timestamp } from '../../db/types.js'
import type { AddressValue } from '../cardholders/index.js'

export interface KycAttestationsTable {
  id: string
  cardholder_id: string
  organization_id: string
  environment: string
  status: string
  provider: string
  provider_reference: string | null
  method: string | null
  verified_at: Timestamp
  expires_at: Timestamp | null
  reference: string | null
  /** The `identity` object, sealed under the master key (it is personal data). */
  identity_sealed: string | null
  address: Json<AddressValue | null> | null
  created_at: Timestamp
}

export interface KycDocumentsTable {
  id: string
  attestation_id: string
  position: number
  kind: string
  file_name: string
  content_type: string
  size_bytes: number
  sha256: string
  /** Per-document data key wrapped by the master key; null once the document is no longer held. */
  wrapped_key: Buffer | Uint8Array | null
  /** AES-256-GCM ciphertext of the file; null once the document is no longer held. */
  ciphertext: Buffer | Uint8Array | null
  created_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    kyc_attestations: KycAttestationsTable
    kyc_documents: KycDocumentsTable
  }
}
