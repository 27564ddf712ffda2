import { iso } from '../../http/ownership.js'
import type { ReportRow } from './repo.js'
import type { ReportView } from './schemas.js'

/** The REST shape of a report; `download_url` is absolute (under BASE_URL) and set only once it succeeded. */
export function presentReport(row: ReportRow, baseUrl: string): ReportView {
  const succeeded = row.status === 'succeeded'
  return {
    id: row.id,
    object: 'report',
    type: row.type as ReportView['type'],
    status: row.status as ReportView['status'],
    from: iso(row.window_from)!,
    to: iso(row.window_to)!,
    row_count: succeeded ? Number(row.row_count) : null,
    size_bytes: succeeded ? Number(row.size_bytes) : null,
    failure_reason: row.failure_reason as ReportView['failure_reason'],
    download_url: succeeded ? `${baseUrl}/v1/reports/${row.id}/download` : null,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    completed_at: iso(row.completed_at),
  }
}
