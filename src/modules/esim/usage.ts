import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import type { ScheduleType } from '../../jobs/types.js'
import { onClock } from '../../lib/object-clock.js'
import { DEFAULT_ALERTS } from './alerts.js'
import { claimAutoTopUps, runAutoTopUp } from './auto-top-up.js'
import { emitEsimEvents, type EsimEvent } from './esim-events.js'
import * as esims from './esims-repo.js'
import { presentEsim, requireEsim, type EsimView } from './esims-service.js'
import * as repo from './usage-repo.js'
import type { UsageReportBatch, UsageReportBatchRequest } from './schemas.js'

export const USAGE_SCHEDULE = 'esim.apply_usage' satisfies ScheduleType
/** How often the usage sweep looks at the inbox; a run drains it. */
export const USAGE_EVERY_MS = 2_000
/** Reports one transaction of the sweep applies: a few statements for the whole batch. */
export const USAGE_BATCH = 2_000

/** The events one applied report causes, in the order they happened. */
function eventsOf(o: repo.UsageOutcome): EsimEvent[] {
  const esimId = o.esim_id!
  const out: EsimEvent[] = []
  if (o.installed_now) out.push({ esimId, type: 'esim.installed' })
  if (o.first_use) out.push({ esimId, type: 'esim.first_used' })
  for (const pct of o.reached_pct) {
    out.push({
      esimId,
      type: 'esim.usage_threshold_reached',
      details: {
        threshold_pct: pct,
        data_used_mb: o.after,
        data_remaining_mb: o.data_mb === null ? 0 : Math.max(0, o.data_mb - o.after),
      },
    })
  }
  // The warning comes before the depletion when one report crosses both.
  if (o.low_data) out.push({ esimId, type: 'esim.low_data' })
  if (o.depleted) out.push({ esimId, type: 'esim.depleted' })
  return out
}

/**
 * Applies usage reports (at most one per eSIM) inside the caller's transaction, set-based: the eSIMs' locks, one
 * statement for every package and eSIM row, one for every event, and the auto top-ups the crossings start (claimed
 * and queued as jobs in this transaction; `auto_top_up_crossing` names the package whose crossing started one).
 */
export async function applyUsage(
  trx: Db,
  reports: readonly repo.UsageInput[],
  now: Date,
  clockId: string | null = null,
): Promise<(repo.UsageOutcome & { auto_top_up_crossing?: string })[]> {
  await repo.lockEsims(trx, [...new Set(reports.map((r) => r.esimId))].sort())
  const outcomes = await repo.applyUsageReports(
    trx,
    reports,
    DEFAULT_ALERTS.usage_thresholds_pct,
    now,
  )
  const applied = outcomes.filter((o) => o.applied)
  await emitEsimEvents(trx, applied.flatMap(eventsOf), now, clockId)
  const claimed = await claimAutoTopUps(trx, applied, now, clockId)
  if (claimed.length === 0) return outcomes
  const byEsim = new Map(claimed.map((c) => [c.esim_id, c.crossing_order_id]))
  return outcomes.map((o) =>
    o.esim_id && byEsim.has(o.esim_id) ? { ...o, auto_top_up_crossing: byEsim.get(o.esim_id) } : o,
  )
}

/** Why a report was not applied, as the single-report route answers it. */
function refusal(o: repo.UsageOutcome, used: number): ApiError {
  if (o.esim_id === null) return new ApiError('esim_not_found')
  if (o.inactive)
    return new ApiError('esim_invalid_state', {
      message: 'No data flows on a suspended or canceled eSIM.',
    })
  if (o.no_package)
    return new ApiError('invalid_parameter', {
      param: 'data_used_mb',
      message: 'No package is running on this eSIM.',
    })
  return new ApiError('invalid_parameter', {
    param: 'data_used_mb',
    message: `Usage only grows: ${o.before} MB are already used (reported ${used}).`,
  })
}

/**
 * Sandbox simulator: the device has used `dataUsedMb` of the running package (the oldest one running when
 * top-ups run beside it; a running total, capped at its volume). The same set-based path as the usage sweep, for one
 * report: thresholds, esim.low_data at 80 %, depletion (esim.depleted after esim.low_data when one report crosses
 * both), installation and first use. An auto top-up the report starts runs before the answer (its job, queued too,
 * then finds it done), so the answer shows the package it added.
 */
export async function recordUsage(
  wall: AppDeps,
  ctx: RequestCtx,
  esimId: string,
  dataUsedMb: number,
): Promise<EsimView> {
  const esim = await requireEsim(wall.db, ctx, esimId)
  // Under a sandbox clock the report lands at the clock's time, and so does the auto top-up it starts.
  const deps = await onClock(wall, esim.clock_id)
  const now = deps.clock.now()
  const { view, crossing } = await withTx(deps.db, async (trx) => {
    const [outcome] = await applyUsage(
      trx,
      [
        {
          esimId: esim.id,
          used: dataUsedMb,
          organizationId: ctx.organizationId,
          environment: ctx.environment,
        },
      ],
      now,
      esim.clock_id ?? null,
    )
    if (!outcome.applied) throw refusal(outcome, dataUsedMb)
    const fresh = (await esims.findEsim(trx, esim.id))!
    return {
      view: presentEsim(fresh, await esims.bundlesOf(trx, [esim.id]), now),
      crossing: outcome.auto_top_up_crossing,
    }
  })
  if (crossing === undefined) return view
  await runAutoTopUp(deps, crossing)
  const fresh = (await esims.findEsim(deps.db, esim.id))!
  return presentEsim(fresh, await esims.bundlesOf(deps.db, [esim.id]), deps.clock.now())
}

/**
 * Sandbox simulator of a network's usage feed: the reports wait in the inbox for the usage sweep (`esim.apply_usage`,
 * every 2 s), which applies them in batches as it would a real network's. Reports naming an eSIM the caller does not
 * have are dropped by the sweep.
 */
export async function queueUsageReports(
  deps: AppDeps,
  ctx: RequestCtx,
  body: Static<typeof UsageReportBatchRequest>,
): Promise<Static<typeof UsageReportBatch>> {
  const queued = await withTx(deps.db, (trx) =>
    repo.queueReports(
      trx,
      body.reports.map((r) => ({
        organization_id: ctx.organizationId,
        environment: ctx.environment,
        esim_id: r.esim_id,
        data_used_mb: r.data_used_mb,
      })),
      deps.clock.now(),
    ),
  )
  return { object: 'esim_usage_report_batch', queued }
}

/**
 * The claimed reports by the sandbox clock of their eSIM (null: none), each group with the time it lands at: wall time
 * `now`, or the clock's (one read per clock, only when a report is under one).
 */
async function byClock(
  deps: AppDeps,
  claimed: readonly repo.QueuedReport[],
  now: Date,
): Promise<{ clockId: string | null; now: Date; reports: repo.QueuedReport[] }[]> {
  const groups = new Map<string | null, repo.QueuedReport[]>()
  for (const r of claimed) {
    const list = groups.get(r.clock_id) ?? []
    list.push(r)
    groups.set(r.clock_id, list)
  }
  const out = []
  for (const [clockId, reports] of groups)
    out.push({ clockId, now: clockId ? (await onClock(deps, clockId)).clock.now() : now, reports })
  return out
}

/** Splits claimed reports into rounds holding at most one report per eSIM, each eSIM's in the order they arrived. */
function rounds(reports: readonly repo.QueuedReport[]): repo.QueuedReport[][] {
  const out: repo.QueuedReport[][] = []
  const seen = new Map<string, number>()
  for (const r of reports) {
    const k = seen.get(r.esim_id) ?? 0
    seen.set(r.esim_id, k + 1)
    ;(out[k] ??= []).push(r)
  }
  return out
}

export interface SweepOptions {
  batchSize?: number
  /** Batches applied at once (each its own transaction and connection): claims skip each other's reports. */
  parallel?: number
  /** Stop claiming after this long (the next run goes on). */
  budgetMs?: number
}

/**
 * The usage sweep: applies the queued reports in batches of `batchSize`, `parallel` at a time, until the inbox is
 * empty or the budget is spent. Each batch claims its reports, applies them set-based and commits with their events;
 * a report the sweep cannot apply (unknown eSIM, usage lower than recorded, nothing running) is dropped.
 * Answers how many reports it took.
 */
export async function sweepUsage(deps: AppDeps, options: SweepOptions = {}): Promise<number> {
  const batchSize = options.batchSize ?? USAGE_BATCH
  const started = Date.now()
  const budget = options.budgetMs ?? 50_000
  let total = 0
  let dropped = 0
  const worker = async () => {
    while (Date.now() - started < budget) {
      const { taken, refused } = await withTx(deps.db, async (trx) => {
        const claimed = await repo.claimReports(trx, batchSize)
        let notApplied = 0
        // A report about an eSIM under a sandbox clock lands at the clock's time (its events carry the clock).
        for (const group of await byClock({ ...deps, db: trx }, claimed, deps.clock.now())) {
          for (const round of rounds(group.reports)) {
            const outcomes = await applyUsage(
              trx,
              round.map((r) => ({
                esimId: r.esim_id,
                used: r.data_used_mb,
                organizationId: r.organization_id,
                environment: r.environment,
              })),
              group.now,
              group.clockId,
            )
            notApplied += outcomes.filter((o) => !o.applied).length
          }
        }
        return { taken: claimed.length, refused: notApplied }
      })
      total += taken
      dropped += refused
      if (taken < batchSize) return
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, options.parallel ?? 1) }, worker))
  if (dropped > 0) deps.log.info({ dropped, applied: total - dropped }, 'usage reports dropped')
  return total
}
