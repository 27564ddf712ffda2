import { sql, type Insertable, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { closedSetPage, type PageBounds } from '../../http/pagination.js'
import { REPORT_STATUSES, REPORT_TYPES } from './schemas.js'
import type { ReportsTable } from './types.js'
import './types.js'

/** A report as every read sees it (its CSV lives in `report_parts`). */
export type ReportRow = Selectable<ReportsTable>

const COLUMNS = [
  'id',
  'organization_id',
  'environment',
  'type',
  'status',
  'window_from',
  'window_to',
  'row_count',
  'size_bytes',
  'failure_reason',
  'parts_generation',
  'created_at',
  'updated_at',
  'completed_at',
] as const

export async function insertReport(trx: Db, row: Insertable<ReportsTable>): Promise<ReportRow> {
  return trx.insertInto('reports').values(row).returning(COLUMNS).executeTakeFirstOrThrow()
}

export async function findReport(db: Db, id: string): Promise<ReportRow | undefined> {
  return db.selectFrom('reports').select(COLUMNS).where('id', '=', id).executeTakeFirst()
}

/**
 * Writes one part while the report is still pending; false when it no longer is (another run finished it, so
 * this run stops). The pending check takes a share lock on the report row: it waits for a finishing
 * transaction, so a part never lands after the finish removed the other generations.
 */
export async function insertPendingPart(
  db: Db,
  part: { reportId: string; generation: string; seq: number; content: string },
): Promise<boolean> {
  const { rows } = await sql<{ seq: number }>`
    INSERT INTO report_parts (report_id, generation, seq, content)
    SELECT id, ${part.generation}, ${part.seq}, ${part.content} FROM reports
    WHERE id = ${part.reportId} AND status = 'pending'
    FOR SHARE
    RETURNING seq`.execute(db)
  return rows.length === 1
}

/** The content of one part, or undefined past the last one. */
export async function findPart(
  db: Db,
  reportId: string,
  generation: string,
  seq: number,
): Promise<string | undefined> {
  const row = await db
    .selectFrom('report_parts')
    .select('content')
    .where('report_id', '=', reportId)
    .where('generation', '=', generation)
    .where('seq', '=', seq)
    .executeTakeFirst()
  return row?.content
}

/** Removes the parts of one generation (a run that did not finish the report). */
export async function deleteGeneration(
  db: Db,
  reportId: string,
  generation: string,
): Promise<void> {
  await db
    .deleteFrom('report_parts')
    .where('report_id', '=', reportId)
    .where('generation', '=', generation)
    .execute()
}

/** Removes every part of the report except those of `keep` (every part when `keep` is null). */
export async function deletePartsExcept(
  db: Db,
  reportId: string,
  keep: string | null,
): Promise<void> {
  let q = db.deleteFrom('report_parts').where('report_id', '=', reportId)
  if (keep !== null) q = q.where('generation', '<>', keep)
  await q.execute()
}

/** Records the outcome of a pending report; undefined when it was no longer pending (another run finished it). */
export async function finishPending(
  db: Db,
  id: string,
  outcome: {
    status: 'succeeded' | 'failed'
    partsGeneration: string | null
    rowCount: number | null
    sizeBytes: number | null
    failureReason: string | null
    now: Date
  },
): Promise<ReportRow | undefined> {
  return db
    .updateTable('reports')
    .set({
      status: outcome.status,
      parts_generation: outcome.partsGeneration,
      row_count: outcome.rowCount,
      size_bytes: outcome.sizeBytes,
      failure_reason: outcome.failureReason,
      completed_at: outcome.now,
      updated_at: outcome.now,
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returning(COLUMNS)
    .executeTakeFirst()
}

export interface ReportFilter {
  organizationId: string
  environment: string
  type?: string
  status?: string
}

/**
 * A page of the caller's reports, newest first; `type` and `status` read `reports_type_status`, one range per
 * value of whichever is left open.
 */
export async function listReports(
  db: Db,
  filter: ReportFilter,
  bounds: PageBounds,
): Promise<ReportRow[]> {
  const q = db
    .selectFrom('reports')
    .select(COLUMNS)
    .where('organization_id', '=', filter.organizationId)
    .where('environment', '=', filter.environment)
  return closedSetPage(db, q, bounds, {
    type: { value: filter.type, all: REPORT_TYPES },
    status: { value: filter.status, all: REPORT_STATUSES },
  })
}
