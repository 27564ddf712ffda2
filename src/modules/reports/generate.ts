import type { AppDeps } from '../../app-deps.js'
import type { JobRecord } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { csvHeader, csvLine } from './csv.js'
import * as repo from './repo.js'
import type { ReportType } from './schemas.js'
import { SOURCES } from './sources.js'

/** Job that generates one report's CSV; queued in the transaction that creates the report. */
export const REPORT_JOB = 'report.generate' satisfies JobType
/**
 * Most data lines a report holds; a window with more fails as `too_many_rows` (the CSV is kept in the
 * database, so this bounds its size). A settings object so tests can lower it.
 */
export const REPORT_LIMITS = { maxRows: 100_000 }
/** Rows read per query: the generator interleaves with API traffic instead of holding one long statement. */
const BATCH = 1000
/** Runs of a job that throws before the report is marked failed (`internal_error`) instead of retried again. */
export const MAX_REPORT_ATTEMPTS = 5

export type CsvOutcome = { csv: string; rows: number } | { tooMany: true }

/** Reads the report's window oldest first, batch after batch, into one CSV; stops once it holds too many rows. */
export async function buildCsv(deps: AppDeps, report: repo.ReportRow): Promise<CsvOutcome> {
  const source = SOURCES[report.type as ReportType]
  const chunks = [csvHeader(source.columns)]
  let rows = 0
  let after: { createdAt: Date; id: string } | undefined
  for (;;) {
    const batch = await source.fetch(deps, {
      organizationId: report.organization_id, environment: report.environment,
      from: new Date(report.window_from), to: new Date(report.window_to), after, limit: BATCH,
    })
    if (rows + batch.length > REPORT_LIMITS.maxRows) return { tooMany: true }
    for (const row of batch) chunks.push(csvLine(source.columns, row))
    rows += batch.length
    if (batch.length < BATCH) return { csv: chunks.join(''), rows }
    const last = batch[batch.length - 1]
    after = { createdAt: new Date(last.created_at), id: last.id }
  }
}

/**
 * Generates a pending report and records the outcome; a report that is no longer pending is left alone
 * (a second run of the same job changes nothing). Errors are retried by the runner with backoff, until
 * the last allowed attempt marks the report failed, so no report stays pending for good.
 */
export async function runReportJob(deps: AppDeps, job: Pick<JobRecord, 'payload' | 'attempts'>): Promise<void> {
  const report = await repo.findReport(deps.db, String(job.payload.report_id))
  if (!report || report.status !== 'pending') return
  let outcome: CsvOutcome
  try {
    outcome = await buildCsv(deps, report)
  } catch (err) {
    if (job.attempts < MAX_REPORT_ATTEMPTS) throw err
    deps.log.error({ err, report_id: report.id }, 'report generation failed for good')
    await repo.finishPending(deps.db, report.id, { status: 'failed', content: null, rowCount: null, sizeBytes: null, failureReason: 'internal_error', now: deps.clock.now() })
    return
  }
  const now = deps.clock.now()
  if ('tooMany' in outcome) {
    await repo.finishPending(deps.db, report.id, { status: 'failed', content: null, rowCount: null, sizeBytes: null, failureReason: 'too_many_rows', now })
    return
  }
  await repo.finishPending(deps.db, report.id, {
    status: 'succeeded', content: outcome.csv, rowCount: outcome.rows, sizeBytes: Buffer.byteLength(outcome.csv), failureReason: null, now,
  })
}
