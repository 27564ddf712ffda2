import type { Timestamp } from '../db/types.js'

export interface ProcessorFaultsTable {
  organization_id: string
  environment: string
  operation: string
  error: string
  remaining: number
  updated_at: Timestamp
}

export interface ProcessorOperationsTable {
  id: string
  organization_id: string
  environment: string
  processor: string
  operation: string
  subject_id: string
  state: string
  error: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface SimProcessorObjectsTable {
  processor: string
  kind: string
  key: string
  reference: string
  organization_id: string
  environment: string
  state: string
  data: Record<string, unknown>
  /** Cards only: the PAN and CVC encrypted under purpose keys, and an HMAC of the PAN (unique) — never in clear. */
  pan_encrypted: string | null
  cvc_encrypted: string | null
  pan_hmac: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

/** A rate an organization pinned for its sandbox: `rate` is quote-per-base, canonical decimal text. */
export interface SimFxRatesTable {
  organization_id: string
  environment: string
  base: string
  quote: string
  rate: string
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/types.js' {
  interface Database {
    processor_faults: ProcessorFaultsTable
    processor_operations: ProcessorOperationsTable
    sim_processor_objects: SimProcessorObjectsTable
    sim_fx_rates: SimFxRatesTable
  }
}
