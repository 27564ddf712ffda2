import type { AppDeps } from '../../app-deps.js'
import { isUniqueViolation, withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx, type Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { enqueue, type JobRecord } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { isId, newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import { emit } from '../events/index.js'
import { applySettledMovement, lockAccountRow } from '../ledger/index.js'
import { requireSimulatorFeed } from '../network-tokens/index.js'
import { findProgram } from '../programs/index.js'
import {
  requireTransaction,
  requireTransactionOnClock,
  type TransactionRow,
} from '../transactions/index.js'
import { disputableAmount, isOpen } from './lifecycle.js'
import { presentDispute } from './present.js'
import * as repo from './repo.js'
import type { DisputeCreateBody, DisputeView } from './schemas.js'

export { presentDispute } from './present.js'

/** Job that takes a submitted dispute under review: the network has accepted the case. */
export const DISPUTE_REVIEW_JOB = 'dispute.review' satisfies JobType
/** How long after submission the network takes the case under review. */
export const DISPUTE_REVIEW_DELAY_MS = 1000

/**
 * `dispute.review` jobs: a dispute still `submitted` moves `under_review`. A dispute under a sandbox clock has its job
 * on the clock (run by its advance, `deps.clock` reading the clock's time); its event names the clock.
 */
export async function runReviewJob(deps: AppDeps, job: JobRecord): Promise<void> {
  const clockId = (job.payload.clock_id as string | undefined) ?? null
  const now = deps.clock.now()
  await withTx(deps.db, async (trx) => {
    const row = await repo.moveIf(
      trx,
      String(job.payload.dispute_id),
      'submitted',
      'under_review',
      now,
    )
    if (row)
      await emit(trx, { ...scopeOfRow(row), clockId }, 'dispute.updated', presentDispute(row), now)
  })
}

/** The caller's dispute by id: another organization's dispute answers exactly like a missing one. */
export async function requireDispute(
  db: Db,
  ctx: Scope,
  disputeId: string,
): Promise<repo.DisputeRow> {
  const row = isId('dsp', disputeId) ? await repo.findDispute(db, disputeId) : undefined
  return requireOwned(row, ctx, 'dispute_not_found')
}

/**
 * The caller's dispute with the dependencies it moves on: under a sandbox clock (its card's cardholder is on one),
 * `deps.clock` reads the clock's time and `clockId` names it. The clock is read with the dispute, in the sandbox only.
 */
async function requireDisputeOnClock(
  deps: AppDeps,
  ctx: Scope,
  disputeId: string,
): Promise<{ current: repo.DisputeRow; deps: AppDeps; clockId: string | null }> {
  if (ctx.environment !== 'sandbox')
    return { current: await requireDispute(deps.db, ctx, disputeId), deps, clockId: null }
  const found = isId('dsp', disputeId)
    ? await repo.findDisputeWithClock(deps.db, disputeId)
    : undefined
  const { clock_id: clockId, ...current } = requireOwned(found, ctx, 'dispute_not_found')
  return { current, deps: await onClock(deps, clockId), clockId }
}

/**
 * What disputes claim of a capture: won back, or still open. A refund cannot take the same money again,
 * so refunds subtract it (call under the account's row lock, as disputes resolve under it too).
 */
export async function disputedTotal(trx: Db, transactionId: string): Promise<number> {
  return repo.claimedTotal(trx, transactionId)
}

function notDisputable(txn: TransactionRow): ApiError {
  const why =
    txn.type !== 'capture'
      ? 'it is a refund; only captures can be disputed'
      : txn.status === 'pending'
        ? 'it is not settled yet'
        : 'nothing is left of it (fully refunded or won back)'
  return new ApiError('transaction_not_refundable', {
    param: 'transaction_id',
    message: `Transaction ${txn.id} cannot be disputed: ${why}.`,
  })
}

/**
 * Opens a dispute of a settled capture, in this order: transaction_not_found, transaction_not_refundable
 * (not a settled capture, or nothing left), dispute_already_open, refund_exceeds_original (amount beyond
 * what is left: amount − refunded − won back). Runs under the account's row lock, as refunds do, so the
 * two never both take the same remainder. The dispute starts `submitted`; a job moves it under review.
 */
export async function createDispute(
  deps: AppDeps,
  ctx: RequestCtx,
  body: DisputeCreateBody,
): Promise<DisputeView> {
  const on = await requireTransactionOnClock(deps, ctx, body.transaction_id, 'transaction_id')
  const seen = on.txn
  const clockId = on.clockId
  const now = on.deps.clock.now()
  try {
    return await withTx(deps.db, async (trx) => {
      await lockAccountRow(trx, seen.account_id)
      const txn = await requireTransaction(trx, ctx, seen.id, 'transaction_id')
      if (txn.type !== 'capture' || txn.status !== 'settled') throw notDisputable(txn)
      const open = await repo.findOpenDispute(trx, txn.id)
      if (open) throw alreadyOpen(txn.id, open.id)
      const remaining = disputableAmount(txn, await repo.wonTotal(trx, txn.id))
      if (remaining === 0) throw notDisputable(txn)
      const amount = body.amount ?? remaining
      if (amount > remaining) {
        throw new ApiError('refund_exceeds_original', {
          param: 'amount',
          message: `At most ${remaining} of transaction ${txn.id} is left to dispute.`,
        })
      }
      const row = await repo.insertDispute(trx, {
        id: newId('dsp'),
        organization_id: txn.organization_id,
        environment: txn.environment,
        transaction_id: txn.id,
        card_id: txn.card_id,
        account_id: txn.account_id,
        program_id: txn.program_id,
        amount,
        currency: txn.currency,
        reason: body.reason,
        evidence: body.evidence === undefined ? null : json(body.evidence),
        status: 'submitted',
        resolved_at: null,
        created_at: now,
        updated_at: now,
      })
      await enqueue(trx, {
        type: DISPUTE_REVIEW_JOB,
        payload: clockId ? { dispute_id: row.id, clock_id: clockId } : { dispute_id: row.id },
        runAt: new Date(now.getTime() + DISPUTE_REVIEW_DELAY_MS),
        ...scopeOfRow(row),
        // Under a sandbox clock, the review is due on the clock's time and runs in its advance.
        clockId,
      })
      const view = presentDispute(row)
      await emit(trx, { ...scopeOfRow(row), clockId }, 'dispute.created', view, now)
      return view
    })
  } catch (err) {
    if (isUniqueViolation(err, repo.ONE_OPEN_CONSTRAINT)) throw alreadyOpen(seen.id)
    throw err
  }
}

function alreadyOpen(transactionId: string, disputeId?: string): ApiError {
  return new ApiError('dispute_already_open', {
    param: 'transaction_id',
    message: `Transaction ${transactionId} already has an open dispute${disputeId ? ` (${disputeId})` : ''}; withdraw it or wait for its outcome.`,
  })
}

function finalState(row: repo.DisputeRow, action: string): ApiError {
  return new ApiError('dispute_invalid_state', {
    message: `Dispute ${row.id} is ${row.status}, which is final; it cannot be ${action}.`,
  })
}

/** The caller withdraws an open dispute (submitted or under_review → withdrawn); nothing moves on the account. */
export async function withdrawDispute(
  deps: AppDeps,
  ctx: RequestCtx,
  disputeId: string,
): Promise<DisputeView> {
  const on = await requireDisputeOnClock(deps, ctx, disputeId)
  const { current, clockId } = on
  const now = on.deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const locked = (await repo.lockDispute(trx, current.id))!
    if (!isOpen(locked.status)) throw finalState(locked, 'withdrawn')
    const row = await repo.updateDispute(trx, locked.id, {
      status: 'withdrawn',
      resolved_at: now,
      updated_at: now,
    })
    const view = presentDispute(row)
    await emit(trx, { ...scopeOfRow(row), clockId }, 'dispute.updated', view, now)
    return view
  })
}

/**
 * Sandbox: the network decides an open dispute. A submitted one passes through under_review first (one
 * dispute.updated each). `won` credits the disputed amount to the account (ledger `dispute_credit`, also
 * on a blocked account) in the same transaction as the status change; `lost` moves nothing.
 */
export async function resolveDispute(
  deps: AppDeps,
  ctx: RequestCtx,
  disputeId: string,
  outcome: 'won' | 'lost',
): Promise<DisputeView> {
  const on = await requireDisputeOnClock(deps, ctx, disputeId)
  const { current, clockId } = on
  const program = await findProgram(deps.db, current.program_id)
  if (!program) throw new ApiError('program_not_provisioned')
  requireSimulatorFeed(deps.processors, program, 'disputes')
  const now = on.deps.clock.now()
  return withTx(deps.db, async (trx) => {
    await lockAccountRow(trx, current.account_id)
    let row = (await repo.lockDispute(trx, current.id))!
    if (!isOpen(row.status)) throw finalState(row, 'resolved')
    if (row.status === 'submitted') {
      row = await repo.updateDispute(trx, row.id, { status: 'under_review', updated_at: now })
      await emit(trx, { ...scopeOfRow(row), clockId }, 'dispute.updated', presentDispute(row), now)
    }
    if (outcome === 'won') {
      await applySettledMovement(
        trx,
        {
          accountId: row.account_id,
          type: 'dispute_credit',
          amount: Number(row.amount),
          currency: row.currency,
          sourceId: row.id,
          requireOpen: false,
          description: `Dispute ${row.id} won`,
        },
        now,
      )
    }
    row = await repo.updateDispute(trx, row.id, {
      status: outcome,
      resolved_at: now,
      updated_at: now,
    })
    const view = presentDispute(row)
    await emit(trx, { ...scopeOfRow(row), clockId }, 'dispute.updated', view, now)
    return view
  })
}

export async function retrieveDispute(
  deps: AppDeps,
  ctx: RequestCtx,
  disputeId: string,
): Promise<DisputeView> {
  return presentDispute(await requireDispute(deps.db, ctx, disputeId))
}

export interface DisputeListFilter {
  transaction_id?: string
  card_id?: string
  status?: string
}

/** One page of the caller's disputes, newest first. */
export async function listDisputes(
  deps: AppDeps,
  ctx: RequestCtx,
  filter: DisputeListFilter,
  page: PageParams,
): Promise<ListResult<DisputeView>> {
  const where: repo.DisputeFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    transactionId: filter.transaction_id,
    cardId: filter.card_id,
    status: filter.status,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/disputes',
    page,
    sortKey: (r: repo.DisputeRow) => r.id,
    fetch: (bounds) => repo.listDisputes(deps.db, where, bounds),
    present: presentDispute,
  })
}
