import type { Readable } from 'node:stream'
import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { enqueue } from '../../jobs/queue.js'
import { isId, newId } from '../../lib/ids.js'
import { REPORT_JOB } from './generate.js'
import { partStream } from './part-stream.js'
import { presentReport } from './present.js'
import * as repo from './repo.js'
import type { ReportCreateBody, ReportView } from './schemas.js'

/** Longest window one report covers. */
export const MAX_WINDOW_DAYS = 366
const DAY_MS = 24 * 60 * 60 * 1000

/** An ISO 8601 timestamp, or a bare date meaning midnight UTC (the schema checked the form). */
function instant(value: string, param: string): Date {
  const at = new Date(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00Z` : value)
  if (Number.isNaN(at.getTime()))
    throw new ApiError('invalid_parameter', {
      param,
      message: `Invalid ${param}: not an ISO 8601 timestamp.`,
    })
  return at
}

/** The window [from, to): `to` after `from`, at most 366 days apart. */
export function parseWindow(body: Pick<ReportCreateBody, 'from' | 'to'>): { from: Date; to: Date } {
  const from = instant(body.from, 'from')
  const to = instant(body.to, 'to')
  if (to.getTime() <= from.getTime())
    throw new ApiError('invalid_parameter', {
      param: 'to',
      message: 'Invalid to: must be later than from.',
    })
  if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    throw new ApiError('invalid_parameter', {
      param: 'to',
      message: `Invalid to: a report covers at most ${MAX_WINDOW_DAYS} days after from.`,
    })
  }
  return { from, to }
}

/** Records a pending report and queues its generation in the same transaction: the job exists iff the report does. */
export async function createReport(
  deps: AppDeps,
  ctx: RequestCtx,
  body: ReportCreateBody,
): Promise<ReportView> {
  const window = parseWindow(body)
  const now = deps.clock.now()
  const row = await withTx(deps.db, async (trx) => {
    const inserted = await repo.insertReport(trx, {
      id: newId('rpt'),
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      type: body.type,
      status: 'pending',
      window_from: window.from,
      window_to: window.to,
      row_count: null,
      size_bytes: null,
      failure_reason: null,
      parts_generation: null,
      created_at: now,
      updated_at: now,
      completed_at: null,
    })
    await enqueue(trx, {
      type: REPORT_JOB,
      payload: { report_id: inserted.id },
      organizationId: ctx.organizationId,
      environment: ctx.environment,
    })
    return inserted
  })
  return presentReport(row, deps.config.baseUrl)
}

/** The caller's report by id: another organization's answers exactly like a missing one. */
export async function requireReport(db: Db, ctx: Scope, reportId: string): Promise<repo.ReportRow> {
  const row = isId('rpt', reportId) ? await repo.findReport(db, reportId) : undefined
  return requireOwned(row, ctx, 'report_not_found')
}

export async function retrieveReport(
  deps: AppDeps,
  ctx: RequestCtx,
  reportId: string,
): Promise<ReportView> {
  return presentReport(await requireReport(deps.db, ctx, reportId), deps.config.baseUrl)
}

export interface ReportListFilter {
  type?: string
  status?: string
}

/** One page of the caller's reports, newest first. */
export async function listReports(
  deps: AppDeps,
  ctx: RequestCtx,
  filter: ReportListFilter,
  page: PageParams,
): Promise<ListResult<ReportView>> {
  const where: repo.ReportFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    type: filter.type,
    status: filter.status,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/reports',
    page,
    sortKey: (r: repo.ReportRow) => r.id,
    fetch: (bounds) => repo.listReports(deps.db, where, bounds),
    present: (r) => presentReport(r, deps.config.baseUrl),
  })
}

/** A succeeded report's CSV: its name, its size, and the stream of its parts (opened only when sent). */
export interface ReportFile {
  filename: string
  sizeBytes: number
  open(): Readable
}

/** The CSV of a succeeded report, streamed from its parts; a pending or failed one answers report_not_ready. */
export async function downloadReport(
  deps: AppDeps,
  ctx: RequestCtx,
  reportId: string,
): Promise<ReportFile> {
  const report = await requireReport(deps.db, ctx, reportId)
  if (report.status === 'pending') {
    throw new ApiError('report_not_ready', {
      message: `Report ${report.id} is still pending; poll GET /v1/reports/${report.id} until it has succeeded.`,
    })
  }
  if (report.status === 'failed') {
    throw new ApiError('report_not_ready', {
      message: `Report ${report.id} failed (${report.failure_reason}) and has no file; create a new report.`,
    })
  }
  const generation = report.parts_generation
  if (generation === null || report.size_bytes === null)
    throw new Error(`report ${report.id} succeeded without parts`)
  const sizeBytes = Number(report.size_bytes)
  return {
    filename: `${report.id}.csv`,
    sizeBytes,
    open: () => partStream(deps.db, report.id, generation, sizeBytes),
  }
}
