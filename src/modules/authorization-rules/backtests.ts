/**
 * Backtests (docs/authorization-rules.md, "Backtests"): a rule replayed over the stored authorizations of a window,
 * asked with `POST /v1/authorization_rules/{id}/backtests` and run by a job, which reads the authorizations page by
 * page through `STORED_AUTHORIZATIONS` (answered by the authorizations module) into one `RuleReplay`, then records the
 * results and emits `authorization_rule.backtest_completed` in one transaction.
 */
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { json } from '../../db/types.js'
import { type RequestCtx, scopeOfRow } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso, requireOwned } from '../../http/ownership.js'
import { type ListResult, paginate } from '../../http/pagination.js'
import type { JobRecord } from '../../jobs/queue.js'
import { enqueue } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { isId, newId } from '../../lib/ids.js'
import { emit } from '../events/index.js'
import * as repo from './backtest-repo.js'
import {
  BACKTEST_EXAMPLES,
  type BacktestCreateBody,
  type BacktestListQueryType,
  type BacktestView,
  MAX_BACKTEST_DAYS,
} from './backtest-schemas.js'
import { STORED_AUTHORIZATIONS } from './hooks.js'
import { type ReplayableRule, type ReplayReport, replayFrom, RuleReplay } from './replay.js'
import { ownedRule } from './service.js'
import type { BacktestResultsValue } from './types.js'

/** The job that replays one backtest; queued in the transaction that records it. */
export const BACKTEST_JOB = 'authorization_rule.backtest' satisfies JobType
/** Authorizations read per page: two statements each (the page and its cards), whatever the window holds. */
export const BACKTEST_PAGE = 5000
/** Runs of a job that throws before the backtest is marked failed instead of retried again. */
export const MAX_BACKTEST_ATTEMPTS = 3

const DAY_MS = 24 * 60 * 60 * 1000

export function presentBacktest(row: repo.BacktestRow): BacktestView {
  return {
    id: row.id,
    object: 'authorization_rule_backtest',
    rule_id: row.rule_id,
    from: iso(row.window_from)!,
    to: iso(row.window_to)!,
    status: row.status,
    results: row.results as BacktestResultsValue | null,
    failure_reason: row.failure_reason,
    created_at: iso(row.created_at)!,
    completed_at: iso(row.completed_at),
  }
}

/** The window `[from, to)`: `to` after `from`, at most MAX_BACKTEST_DAYS apart (the schema checked RFC 3339). */
function backtestWindow(body: BacktestCreateBody): { from: Date; to: Date } {
  const from = new Date(body.from)
  const to = new Date(body.to)
  for (const [param, at] of [
    ['from', from],
    ['to', to],
  ] as const)
    if (Number.isNaN(at.getTime()))
      throw new ApiError('invalid_parameter', {
        param,
        message: `Invalid ${param}: not an RFC 3339 timestamp.`,
      })
  if (to.getTime() <= from.getTime())
    throw new ApiError('invalid_parameter', {
      param: 'to',
      message: 'Invalid to: must be later than from.',
    })
  if (to.getTime() - from.getTime() > MAX_BACKTEST_DAYS * DAY_MS)
    throw new ApiError('invalid_parameter', {
      param: 'to',
      message: `Invalid to: a backtest covers at most ${MAX_BACKTEST_DAYS} days after from.`,
    })
  return { from, to }
}

/**
 * POST: records a pending backtest of the rule as it is now (its type, scope and parameters: a later change does not
 * change what it replays) and queues its job in the same transaction.
 */
export async function createBacktest(
  deps: AppDeps,
  ctx: RequestCtx,
  ruleId: string,
  body: BacktestCreateBody,
): Promise<BacktestView> {
  const rule = await ownedRule(deps, ctx, ruleId)
  const window = backtestWindow(body)
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const row = await repo.insertBacktest(trx, {
      id: newId('arb', now),
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      rule_id: rule.id,
      rule: json({
        type: rule.type,
        parameters: rule.parameters,
        scope: { level: rule.scope_level, ids: rule.scope_ids, exclude_ids: rule.exclude_ids },
      }) as never,
      window_from: window.from,
      window_to: window.to,
      status: 'pending',
      results: null,
      failure_reason: null,
      created_at: now,
      updated_at: now,
      completed_at: null,
    })
    await enqueue(trx, {
      type: BACKTEST_JOB,
      payload: { backtest_id: row.id },
      organizationId: ctx.organizationId,
      environment: ctx.environment,
    })
    return presentBacktest(row)
  })
}

export async function retrieveBacktest(
  deps: AppDeps,
  ctx: RequestCtx,
  ruleId: string,
  backtestId: string,
): Promise<BacktestView> {
  const rule = await ownedRule(deps, ctx, ruleId)
  const row = isId('arb', backtestId) ? await repo.findBacktest(deps.db, backtestId) : undefined
  const owned = requireOwned(row, ctx, 'authorization_rule_backtest_not_found')
  if (owned.rule_id !== rule.id) throw new ApiError('authorization_rule_backtest_not_found')
  return presentBacktest(owned)
}

/** GET: the rule's backtests, newest first. */
export async function listBacktests(
  deps: AppDeps,
  ctx: RequestCtx,
  ruleId: string,
  query: BacktestListQueryType,
): Promise<ListResult<BacktestView>> {
  const rule = await ownedRule(deps, ctx, ruleId)
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: `/v1/authorization_rules/${rule.id}/backtests`,
    page: query,
    sortKey: (r: repo.BacktestRow) => r.id,
    fetch: (bounds) => repo.listBacktests(deps.db, rule.id, bounds),
    present: presentBacktest,
  })
}

function resultsOf(report: ReplayReport): BacktestResultsValue {
  return {
    evaluated: report.evaluated_count,
    would_decline: report.would_decline_count,
    approved_would_decline: report.approved_would_decline_count,
    declined_amount: report.approved_would_decline_amount,
    examples: report.examples.map((e) => ({ ...e, created_at: e.created_at.toISOString() })),
  }
}

/** What one replay read and found (for the job, tests and the benchmark). */
export interface BacktestRun {
  outcome: 'completed' | 'failed' | 'not_pending'
  /** Stored authorizations read, lead-in before the window included. */
  read: number
  pages: number
}

/** Replays the backtest's window, page by page, into one `RuleReplay`. */
async function replay(
  deps: AppDeps,
  row: repo.BacktestRow,
): Promise<{ report: ReplayReport; read: number; pages: number }> {
  const rule = row.rule as ReplayableRule
  const window = { from: new Date(row.window_from), to: new Date(row.window_to) }
  const page = deps.hooks.get(STORED_AUTHORIZATIONS)
  const scope = scopeOfRow(row)
  const replayer = new RuleReplay(rule, window, BACKTEST_EXAMPLES)
  const range = { from: replayFrom(rule, window.from), to: window.to }
  let after: string | null = null
  let read = 0
  let pages = 0
  for (;;) {
    const batch = await page(deps.db, scope, range, after, BACKTEST_PAGE)
    pages++
    read += batch.length
    replayer.add(batch)
    if (batch.length < BACKTEST_PAGE) break
    after = batch[batch.length - 1].id
  }
  return { report: replayer.report(), read, pages }
}

/** Records the outcome and emits `authorization_rule.backtest_completed`, once: false if it was no longer pending. */
async function finish(
  deps: AppDeps,
  row: repo.BacktestRow,
  outcome: Parameters<typeof repo.finishPending>[2],
): Promise<boolean> {
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const done = await repo.finishPending(trx, row.id, outcome, now)
    if (done)
      await emit(
        trx,
        scopeOfRow(done),
        'authorization_rule.backtest_completed',
        presentBacktest(done),
        now,
      )
    return done !== undefined
  })
}

/**
 * Runs a pending backtest: replays it and records `completed` with its results. An error is thrown to the job runner
 * (retried with backoff) unless `lastAttempt`, which records `failed` (`internal_error`), so no backtest stays pending
 * for good. A backtest no longer pending is left alone.
 */
export async function runBacktest(
  deps: AppDeps,
  backtestId: string,
  options: { lastAttempt?: boolean } = {},
): Promise<BacktestRun> {
  const row = await repo.findBacktest(deps.db, backtestId)
  if (!row || row.status !== 'pending') return { outcome: 'not_pending', read: 0, pages: 0 }
  let done: Awaited<ReturnType<typeof replay>>
  try {
    done = await replay(deps, row)
  } catch (err) {
    if (!options.lastAttempt) throw err
    deps.log.error({ err, backtest_id: row.id }, 'authorization rule backtest failed for good')
    const failed = await finish(deps, row, { status: 'failed', failure_reason: 'internal_error' })
    return { outcome: failed ? 'failed' : 'not_pending', read: 0, pages: 0 }
  }
  const completed = await finish(deps, row, {
    status: 'completed',
    results: resultsOf(done.report),
  })
  return { outcome: completed ? 'completed' : 'not_pending', read: done.read, pages: done.pages }
}

/** The `authorization_rule.backtest` job. */
export async function runBacktestJob(
  deps: AppDeps,
  job: Pick<JobRecord, 'payload' | 'attempts'>,
): Promise<void> {
  await runBacktest(deps, String(job.payload.backtest_id), {
    lastAttempt: job.attempts >= MAX_BACKTEST_ATTEMPTS,
  })
}
