import type { Insertable, Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { ReportsTable } from './types.js'
import './types.js'

/** A report without its CSV: what every read but the download needs. */
export type ReportRow = Omit<Selectable<ReportsTable>, 'content'>

const COLUMNS = [
  'id', 'organization_id', 'environment', 'type', 'status', 'window_from', 'window_to', 'row_count', 'size_bytes',
  'failure_reason', 'created_at', 'updated_at', 'completed_at',
] as const

export async function insertReport(trx: Db, row: Insertable<ReportsTable>): Promise<ReportRow> {
  return trx.insertInto('reports').values(row).returning(COLUMNS).executeTakeFirstOrThrow()
}

export async function findReport(db: Db, id: string): Promise<ReportRow | undefined> {
  return db.selectFrom('reports').select(COLUMNS).where('id', '=', id).executeTakeFirst()
}

/** The stored CSV of a report (null until it succeeded). */
export async function findContent(db: Db, id: string): Promise<string | null> {
  const row = await db.selectFrom('reports').select('content').where('id', '=', id).executeTakeFirst()
  return row?.content ?? null
}

/** Records the outcome of a pending report; undefined when it was no longer pending (another run finished it). */
export async function finishPending(db: Db, id: string, outcome: {
  status: 'succeeded' | 'failed'; content: string | null; rowCount: number | null; sizeBytes: number | null; failureReason: string | null; now: Date
}): Promise<ReportRow | undefined> {
  return db.updateTable('reports').set({
    status: outcome.status, content: outcome.content, row_count: outcome.rowCount, size_bytes: outcome.sizeBytes,
    failure_reason: outcome.failureReason, completed_at: outcome.now, updated_at: outcome.now,
  }).where('id', '=', id).where('status', '=', 'pending').returning(COLUMNS).executeTakeFirst()
}

export interface ReportFilter { organizationId: string; environment: string; type?: string; status?: string }

/** A page of the caller's reports, newest first. */
export async function listReports(db: Db, filter: ReportFilter, bounds: PageBounds): Promise<ReportRow[]> {
  let q = db.selectFrom('reports').select(COLUMNS)
    .where('organization_id', '=', filter.organizationId).where('environment', '=', filter.environment)
  if (filter.type !== undefined) q = q.where('type', '=', filter.type)
  if (filter.status !== undefined) q = q.where('status', '=', filter.status)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}
