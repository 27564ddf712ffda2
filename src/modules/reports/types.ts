import type { Timestamp } from '../../db/types.js'

/** One report: what was asked (type, window), how generation went, and which generation of parts is its CSV. */
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
  /** The generation of `report_parts` that is the CSV; null until the report succeeded. */
  parts_generation: string | null
  created_at: Timestamp
  updated_at: Timestamp
  completed_at: Timestamp | null
}

/**
 * One piece of a report's CSV (about REPORT_LIMITS.partBytes, whole lines): the file is the parts of the
 * report's `parts_generation` in `seq` order. Each generation run writes under its own `generation`.
 */
export interface ReportPartsTable {
  report_id: string
  generation: string
  seq: number
  content: string
}

declare module '../../db/types.js' {
  interface Database {
    reports: ReportsTable
    report_parts: ReportPartsTable
  }
}
