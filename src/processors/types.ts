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
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../db/types.js' {
  interface Database {
    processor_faults: ProcessorFaultsTable
    processor_operations: ProcessorOperationsTable
    sim_processor_objects: SimProcessorObjectsTable
  }
}
