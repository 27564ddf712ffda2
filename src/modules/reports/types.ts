import type { Timestamp } from '../../db/types.js'

/** One report: what was asked (type, window), how generation went, and the CSV once it succeeded. */
export interface ReportsTable {
  id: string
  organization_id: string
  environment: string
  type: string
  status: string
  window_from: Timestamp
  window_to: Timestamp
  row_count: number | null
  size_bytes: number | null
  failure_reason: string | null
  /** The CSV text; null until the report succeeded. Read only by the download. */
  content: string | null
  created_at: Timestamp
  updated_at: Timestamp
  completed_at: Timestamp | null
}

declare module '../../db/types.js' {
  interface Database {
    reports: ReportsTable
  }
}
