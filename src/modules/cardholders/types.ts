import type { Generated } from 'kysely'
import type { Json, Timestamp } from '../../db/types.js'

/** Postal address as held and returned; optional parts are null when absent. */
export interface AddressValue {
  line1: string
  line2: string | null
  city: string
  state: string | null
  postal_code: string
  country: string
}

export interface CardholdersTable {
  id: string
  organization_id: string
  environment: string
  type: string
  first_name: string
  last_name: string
  email: string
  phone_number: string | null
  reference: string | null
  address: Json<AddressValue | null> | null
  /** Identity document type and number, AES-GCM sealed under the master key; never returned. */
  identity_document_sealed: string | null
  metadata: Json<Record<string, string>>
  /** The initial status, then the status the current attestation reported; `expired` is computed on read. */
  kyc_status: string
  kyc_attestation_id: string | null
  kyc_expires_at: Timestamp | null
  kyc_has_identity: boolean
  kyc_expiry_notified: boolean
  created_at: Timestamp
  updated_at: Timestamp
  /** Sandbox: the clock its objects read (migration 0130, docs/sandbox-clocks.md); null for wall time. */
  clock_id: Generated<string | null>
}

declare module '../../db/types.js' {
  interface Database {
    cardholders: CardholdersTable
  }
}
