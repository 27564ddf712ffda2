import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import { emit } from '../events/index.js'
import { cardholdersOnClock, deleteCardholdersOnClock } from '../cardholders/index.js'
import { deleteJobsOnClock } from '../../jobs/clock-jobs.js'
import { addDuration } from './duration.js'
import { runDueOnClock } from './advance.js'
import { CLOCK_DELETIONS } from './deletion.js'
import { presentClock } from './present.js'
import * as repo from './repo.js'
import type {
  SandboxClockAdvanceBody,
  SandboxClockCreateBody,
  SandboxClockView,
} from './schemas.js'

const DAY_MS = 24 * 60 * 60 * 1000
/** A clock deletes itself this long after its creation (wall time). */
export const CLOCK_LIFETIME_MS = 30 * DAY_MS
/** An advance (or a deletion) untouched this long is taken as interrupted. */
const STUCK_MS = 60_000
/** The longest single advance. */
export const MAX_ADVANCE_MS = 730 * DAY_MS

/** Events of a clock carry its own id as their clock. */
function clockScope(row: repo.SandboxClockRow) {
  return {
    organizationId: row.organization_id,
    environment: row.environment,
    clockId: row.id,
  }
}

async function requireClock(db: Db, ctx: Scope, id: string): Promise<repo.SandboxClockRow> {
  const row = isId('clk', id) ? await repo.findClock(db, id) : undefined
  return requireOwned(row, ctx, 'sandbox_clock_not_found')
}

async function lockOwnedClock(trx: Db, ctx: Scope, id: string): Promise<repo.SandboxClockRow> {
  const row = isId('clk', id) ? await repo.lockClock(trx, id) : undefined
  return requireOwned(row, ctx, 'sandbox_clock_not_found')
}

export async function createClock(
  deps: AppDeps,
  ctx: RequestCtx,
  body: SandboxClockCreateBody,
): Promise<SandboxClockView> {
  const now = deps.clock.now()
  const frozen = body.frozen_time === undefined ? now : new Date(body.frozen_time)
  if (Number.isNaN(frozen.getTime()))
    throw new ApiError('invalid_parameter', { param: 'frozen_time' })
  return withTx(deps.db, async (trx) => {
    const row = await repo.insertClock(trx, {
      id: newId('clk', now),
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      name: body.name ?? null,
      frozen_time: frozen,
      status: 'ready',
      advancing_to: null,
      deletes_after: new Date(now.getTime() + CLOCK_LIFETIME_MS),
      deleted_at: null,
      objects_deleted_at: null,
      created_at: now,
      updated_at: now,
    })
    const view = presentClock(row)
    await emit(trx, clockScope(row), 'sandbox_clock.created', view, now)
    return view
  })
}

export async function retrieveClock(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<SandboxClockView> {
  return presentClock(await requireClock(deps.db, ctx, id))
}

export async function listClocks(
  deps: AppDeps,
  ctx: RequestCtx,
  page: PageParams,
): Promise<ListResult<SandboxClockView>> {
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/simulate/clocks',
    page,
    sortKey: (r: repo.SandboxClockRow) => r.id,
    fetch: (bounds) => repo.listClocks(deps.db, ctx, bounds),
    present: presentClock,
  })
}

/** The clock's new time from `{to}` or `{by}`: exactly one, after its time, at most 730 days on. */
function targetOf(clock: repo.SandboxClockRow, body: SandboxClockAdvanceBody): Date {
  if ((body.to === undefined) === (body.by === undefined))
    throw new ApiError('invalid_parameter', {
      param: body.to === undefined ? 'to' : 'by',
      message: 'Give exactly one of to (a time) and by (an ISO 8601 duration such as P1D).',
    })
  const param = body.to !== undefined ? 'to' : 'by'
  const target =
    body.to !== undefined ? new Date(body.to) : addDuration(clock.frozen_time, body.by!)
  if (target === null || Number.isNaN(target.getTime()))
    throw new ApiError('invalid_parameter', {
      param,
      message: 'by is an ISO 8601 duration of whole units: P1D, PT36H, P1M, P1Y2M3DT4H.',
    })
  const step = target.getTime() - clock.frozen_time.getTime()
  if (step <= 0)
    throw new ApiError('invalid_parameter', {
      param,
      message: `The clock only moves forward: its time is ${clock.frozen_time.toISOString()}.`,
    })
  if (step > MAX_ADVANCE_MS)
    throw new ApiError('invalid_parameter', {
      param,
      message: 'A clock moves at most 730 days a step; advance again for more.',
    })
  return target
}

/** Whether an advance of the clock is running now (not one left unfinished: untouched for STUCK_MS). */
function advancingNow(clock: repo.SandboxClockRow, now: Date): boolean {
  return clock.status === 'advancing' && now.getTime() - clock.updated_at.getTime() < STUCK_MS
}

/**
 * Advances the clock: it is `advancing` with its target (committed first, so an interrupted advance is finished by
 * the worker or the next call), then everything that fell due under it runs in time order, then it is `ready` at the
 * target and emits sandbox_clock.ready, once. While another advance of the clock runs: 409 sandbox_clock_advancing.
 * An advance left unfinished (interrupted) is finished first.
 */
export async function advanceClock(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  body: SandboxClockAdvanceBody,
): Promise<SandboxClockView> {
  const pending = await requireClock(deps.db, ctx, id)
  if (advancingNow(pending, deps.clock.now())) throw new ApiError('sandbox_clock_advancing')
  if (pending.status === 'advancing' && pending.advancing_to)
    await runAdvance(deps, pending.id, pending.advancing_to)
  const target = await withTx(deps.db, async (trx) => {
    const clock = await lockOwnedClock(trx, ctx, id)
    if (clock.status === 'advancing') throw new ApiError('sandbox_clock_advancing')
    const to = targetOf(clock, body)
    await repo.updateClock(trx, clock.id, {
      status: 'advancing',
      advancing_to: to,
      updated_at: deps.clock.now(),
    })
    return to
  })
  await runAdvance(deps, id, target)
  return presentClock(await requireClock(deps.db, ctx, id))
}

/** Runs what fell due on the clock up to `target`, then ends the advance (once: a conditional update). */
export async function runAdvance(deps: AppDeps, clockId: string, target: Date): Promise<void> {
  await runDueOnClock(deps, clockId, target)
  await withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const row = await repo.finishAdvance(trx, clockId, target, now)
    if (row) await emit(trx, clockScope(row), 'sandbox_clock.ready', presentClock(row), now)
  })
}

/**
 * Deletes the clock and its objects (docs/sandbox-clocks.md, "Deleting"): the clock is marked deleted and emits
 * sandbox_clock.deleted (one transaction: it answers 404 from then on), then its cardholders and everything under
 * them are deleted in batches, each module deleting its own rows. While an advance runs: 409 sandbox_clock_advancing.
 */
export async function deleteClock(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<{ id: string; object: 'sandbox_clock'; deleted: true }> {
  const clock = await requireClock(deps.db, ctx, id)
  if (advancingNow(clock, deps.clock.now())) throw new ApiError('sandbox_clock_advancing')
  if (!(await markClockDeleted(deps, clock.id))) throw new ApiError('sandbox_clock_not_found')
  await deleteClockObjects(deps, clock.id)
  return { id: clock.id, object: 'sandbox_clock', deleted: true }
}

async function markClockDeleted(deps: AppDeps, clockId: string): Promise<boolean> {
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const row = await repo.markDeleted(trx, clockId, now)
    if (!row) return false
    await emit(trx, clockScope(row), 'sandbox_clock.deleted', presentClock(row), now)
    return true
  })
}

/** Cardholders whose objects one round of a clock's deletion deletes. */
const CARDHOLDERS_PER_ROUND = 100

/**
 * Deletes the objects of the deleted clock `clockId`: a round at a time, up to CARDHOLDERS_PER_ROUND of its
 * cardholders, every module's rows of theirs in CLOCK_DELETIONS order (each in batches of short transactions), then
 * the cardholders; then the jobs left on the clock. Resumable: what an interrupted deletion left is found again from
 * the cardholders still on the clock (the worker calls this again for a clock whose `objects_deleted_at` is unset).
 * Answers how many rows went.
 */
export async function deleteClockObjects(deps: AppDeps, clockId: string): Promise<number> {
  let deleted = 0
  for (;;) {
    const holders = await cardholdersOnClock(deps.db, clockId, CARDHOLDERS_PER_ROUND)
    if (holders.length === 0) break
    for (const hook of CLOCK_DELETIONS) deleted += await deps.hooks.get(hook)(deps, holders)
    deleted += await deleteCardholdersOnClock(deps.db, clockId, holders)
    await repo.touchDeletion(deps.db, clockId, deps.clock.now())
  }
  deleted += await deleteJobsOnClock(deps.db, clockId)
  await repo.finishDeletion(deps.db, clockId, deps.clock.now())
  return deleted
}

/** How often the worker finishes interrupted advances and deletes clocks past `deletes_after`. */
export const CLOCK_SWEEP_MS = 30_000

/**
 * The worker's part: finishes advances left `advancing`, deletes clocks past their lifetime (with their objects),
 * and finishes deletions that were interrupted.
 */
export async function sweepClocks(deps: AppDeps): Promise<void> {
  const now = deps.clock.now()
  const before = new Date(now.getTime() - STUCK_MS)
  const stuck = await repo.stuckAdvancing(deps.db, before, 50)
  for (const c of stuck) if (c.advancing_to) await runAdvance(deps, c.id, c.advancing_to)
  for (const c of await repo.dueForDeletion(deps.db, now, 50))
    if (await markClockDeleted(deps, c.id)) await deleteClockObjects(deps, c.id)
  for (const c of await repo.unfinishedDeletions(deps.db, before, 50))
    await deleteClockObjects(deps, c.id)
}

/** The time of clock `clockId` (answers CLOCK_TIME: the objects under it read it as now); null when deleted. */
export async function clockTime(deps: AppDeps, clockId: string): Promise<Date | null> {
  const row = await repo.findClock(deps.db, clockId)
  return row ? new Date(row.frozen_time) : null
}

/** Whether `clockId` is a live clock of the caller (answers the cardholders module's CLOCK_OF_CALLER). */
export async function clockOfCaller(
  deps: AppDeps,
  ctx: RequestCtx,
  clockId: string,
): Promise<boolean> {
  if (!isId('clk', clockId)) return false
  const row = await repo.findClock(deps.db, clockId)
  return (
    row !== undefined &&
    row.organization_id === ctx.organizationId &&
    row.environment === ctx.environment
  )
}
