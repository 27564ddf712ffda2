import { randomUUID } from 'node:crypto'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow } from '../../http/context.js'
import type { JobRecord } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { csvHeader, csvLine } from './csv.js'
import { REPORT_LIMITS } from './limits.js'
import { PartWriter } from './part-writer.js'
import * as repo from './repo.js'
import type { ReportType } from './schemas.js'
import { SOURCES } from './sources.js'

export { REPORT_LIMITS } from './limits.js'

/** Job that generates one report's CSV; queued in the transaction that creates the report. */
export const REPORT_JOB = 'report.generate' satisfies JobType
/** Rows read per query: the generator interleaves with API traffic instead of holding one long statement. */
const BATCH = 1000
/** Runs of a job that throws before the report is marked failed (`internal_error`) instead of retried again. */
export const MAX_REPORT_ATTEMPTS = 5

/** How one run ended: `not_pending` when the report was (or became) finished by another run. */
export type GenerationOutcome = 'succeeded' | 'too_many_rows' | 'internal_error' | 'not_pending'

/** What one run did, for the job, tests and benchmarks. */
export interface GenerationResult {
  outcome: GenerationOutcome
  generation: string | null
  rows: number
  sizeBytes: number
  parts: number
  /** Most CSV text held at once: bounded by the part size, not by the number of rows. */
  maxBufferedBytes: number
}

type Written = 'complete' | 'too_many_rows' | 'not_pending'

/** Reads the report's window oldest first, batch after batch, into parts; stops once it holds too many rows. */
async function writeCsv(
  deps: AppDeps,
  report: repo.ReportRow,
  writer: PartWriter,
): Promise<{ written: Written; rows: number }> {
  const source = SOURCES[report.type as ReportType]
  writer.add(csvHeader(source.columns))
  let rows = 0
  let after: { createdAt: Date; id: string } | undefined
  for (;;) {
    const batch = await source.fetch(deps, {
      ...scopeOfRow(report),
      from: new Date(report.window_from),
      to: new Date(report.window_to),
      after,
      limit: BATCH,
    })
    if (rows + batch.length > REPORT_LIMITS.maxRows) return { written: 'too_many_rows', rows }
    for (const row of batch) {
      if (writer.add(csvLine(source.columns, row)) && !(await writer.flush()))
        return { written: 'not_pending', rows }
    }
    rows += batch.length
    if (batch.length < BATCH)
      return { written: (await writer.flush()) ? 'complete' : 'not_pending', rows }
    const last = batch[batch.length - 1]
    after = { createdAt: new Date(last.created_at), id: last.id }
  }
}

/**
 * Marks the report succeeded with this run's parts and removes every other generation (of runs that crashed
 * or lost their lease), in one transaction, only while it is pending. Answers false when another run finished
 * it first: this run's parts are then removed.
 */
async function finishSucceeded(
  deps: AppDeps,
  reportId: string,
  writer: PartWriter,
  rows: number,
): Promise<boolean> {
  const finished = await withTx(deps.db, async (trx) => {
    const row = await repo.finishPending(trx, reportId, {
      status: 'succeeded',
      partsGeneration: writer.generation,
      rowCount: rows,
      sizeBytes: writer.sizeBytes,
      failureReason: null,
      now: deps.clock.now(),
    })
    if (row) await repo.deletePartsExcept(trx, reportId, writer.generation)
    return row !== undefined
  })
  if (!finished) await repo.deleteGeneration(deps.db, reportId, writer.generation)
  return finished
}

/** Marks the report failed and removes its parts (a failed report has no file); only this run's if it was already finished. */
async function finishFailed(
  deps: AppDeps,
  reportId: string,
  writer: PartWriter,
  reason: 'too_many_rows' | 'internal_error',
): Promise<boolean> {
  return withTx(deps.db, async (trx) => {
    const row = await repo.finishPending(trx, reportId, {
      status: 'failed',
      partsGeneration: null,
      rowCount: null,
      sizeBytes: null,
      failureReason: reason,
      now: deps.clock.now(),
    })
    if (row) await repo.deletePartsExcept(trx, reportId, null)
    else await repo.deleteGeneration(trx, reportId, writer.generation)
    return row !== undefined
  })
}

/**
 * Generates a pending report under a fresh generation id and records the outcome; a report that is no longer
 * pending is left alone. An error is thrown to the caller (the job runner retries it; the parts written stay
 * until a run finishes the report and removes them) unless `lastAttempt`, which marks the report failed
 * (`internal_error`). Exported so a benchmark can run generation in-process.
 */
export async function generateReport(
  deps: AppDeps,
  reportId: string,
  options: { lastAttempt?: boolean } = {},
): Promise<GenerationResult> {
  const report = await repo.findReport(deps.db, reportId)
  if (!report || report.status !== 'pending') {
    return {
      outcome: 'not_pending',
      generation: null,
      rows: 0,
      sizeBytes: 0,
      parts: 0,
      maxBufferedBytes: 0,
    }
  }
  const writer = new PartWriter(deps.db, report.id, randomUUID(), REPORT_LIMITS.partBytes)
  const result = (outcome: GenerationOutcome, rows: number): GenerationResult => ({
    outcome,
    generation: writer.generation,
    rows,
    sizeBytes: writer.sizeBytes,
    parts: writer.parts,
    maxBufferedBytes: writer.maxBufferedBytes,
  })
  let done: { written: Written; rows: number }
  try {
    done = await writeCsv(deps, report, writer)
  } catch (err) {
    if (!options.lastAttempt) throw err
    deps.log.error({ err, report_id: report.id }, 'report generation failed for good')
    return result(
      (await finishFailed(deps, report.id, writer, 'internal_error'))
        ? 'internal_error'
        : 'not_pending',
      0,
    )
  }
  if (done.written === 'not_pending') {
    await repo.deleteGeneration(deps.db, report.id, writer.generation)
    return result('not_pending', done.rows)
  }
  if (done.written === 'too_many_rows') {
    return result(
      (await finishFailed(deps, report.id, writer, 'too_many_rows'))
        ? 'too_many_rows'
        : 'not_pending',
      done.rows,
    )
  }
  return result(
    (await finishSucceeded(deps, report.id, writer, done.rows)) ? 'succeeded' : 'not_pending',
    done.rows,
  )
}

/**
 * The `report.generate` job: errors are retried by the runner with backoff, until the last allowed attempt
 * marks the report failed, so no report stays pending for good. A second run of a finished report changes nothing.
 */
export async function runReportJob(
  deps: AppDeps,
  job: Pick<JobRecord, 'payload' | 'attempts'>,
): Promise<void> {
  await generateReport(deps, String(job.payload.report_id), {
    lastAttempt: job.attempts >= MAX_REPORT_ATTEMPTS,
  })
}
