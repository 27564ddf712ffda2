import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import {
  EsimNetworkTimeout,
  provisionWithDeadline,
  type NetworkOrderStatus,
} from '../../esim-network/port.js'
import { scopeOfRow, type Scope } from '../../http/context.js'
import { ApiError, isApiError } from '../../http/errors.js'
import { enqueue, type JobOutcome, type JobRecord } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { newId } from '../../lib/ids.js'
import { onClock, wallTime } from '../../lib/object-clock.js'
import { requireAccount } from '../accounts/index.js'
import { emit } from '../events/index.js'
import * as repo from './auto-top-up-repo.js'
import { chargeAccount, chargedPrice, refundAccount, type ChargedPrice } from './billing.js'
import * as esims from './esims-repo.js'
import { monthOf, presentEsimSummary } from './esims-service.js'
import * as orders from './orders-repo.js'
import { findTopUp, PLATFORM_VIEW, type TopUpRow } from './packages-repo.js'
import { presentOrder } from './present.js'
import type { UsageOutcome } from './usage-repo.js'

export const AUTO_TOP_UP_JOB = 'esim.auto_top_up' satisfies JobType

const DAY_MS = 24 * 60 * 60 * 1000
/** How long settlement keeps asking a network that has no answer for an open order before declaring it failed. */
const UNKNOWN_GIVE_UP_MS = 60 * 60 * 1000

/**
 * Whether settlement still waits for the network's answer about open order `order` at wall time `wallNow`: it has
 * been open less than `UNKNOWN_GIVE_UP_MS`, measured on the network's wall time (`network_at`: under a sandbox clock
 * the order's own times are the clock's).
 */
export function stillAskingNetwork(
  order: Pick<orders.OrderRow, 'network_at' | 'created_at'>,
  wallNow: Date,
): boolean {
  const since = new Date(order.network_at ?? order.created_at)
  return wallNow.getTime() - since.getTime() < UNKNOWN_GIVE_UP_MS
}

/** Why an auto top-up did not run (`esim.auto_top_up_failed` `data.reason`). */
export type AutoTopUpFailure =
  | 'insufficient_funds'
  | 'account_blocked'
  | 'account_not_found'
  | 'account_not_provisioned'
  | 'currency_mismatch'
  | 'top_up_unavailable'
  | 'max_per_month_reached'
  | 'provisioning_failed'

const sold = (t: TopUpRow) => t.effective_status === 'on_sale' && t.package_status !== 'withdrawn'

function param(err: ApiError, field: string): ApiError {
  return new ApiError(err.code, { param: field, message: err.message })
}

/**
 * What `PATCH` accepts as auto top-up settings: an add-on sold for a package on this eSIM (the purchase path's
 * `esim_top_up_unavailable`), and an account of the eSIM's cardholder whose currency the price reaches (the same
 * conversion as orders paid from accounts). Funds are judged at each run, not here.
 */
export async function checkAutoTopUp(
  deps: AppDeps,
  scope: Scope,
  esim: esims.EsimRow,
  body: {
    top_up_id: string
    account_id: string
    trigger: 'depleted' | 'threshold'
    threshold_pct?: number
    max_per_month: number
  },
): Promise<repo.AutoTopUpSettings> {
  if (body.trigger === 'threshold' && body.threshold_pct === undefined)
    throw new ApiError('invalid_parameter', {
      param: 'auto_top_up.threshold_pct',
      message: 'threshold_pct (1–100) is required with trigger "threshold".',
    })
  if (body.trigger === 'depleted' && body.threshold_pct !== undefined)
    throw new ApiError('invalid_parameter', {
      param: 'auto_top_up.threshold_pct',
      message: 'threshold_pct is taken only with trigger "threshold".',
    })
  const unavailable = (message: string) =>
    new ApiError('esim_top_up_unavailable', { param: 'auto_top_up.top_up_id', message })
  const topUp = await findTopUp(deps.db, scope, body.top_up_id)
  if (!topUp) throw unavailable(`${body.top_up_id} is not an add-on sold by this platform.`)
  if (!sold(topUp)) throw unavailable(`${topUp.id} is no longer sold.`)
  const ends = await repo.packageEnds(deps.db, esim.id, topUp.package_id)
  if (!ends.any)
    throw unavailable(`${topUp.id} extends ${topUp.package_id}, which is not on ${esim.id}.`)
  const field = 'auto_top_up.account_id'
  try {
    const account = await requireAccount(deps.db, scope, body.account_id, field)
    if (esim.cardholder_id !== null && account.cardholder_id !== esim.cardholder_id)
      throw new ApiError('account_cardholder_mismatch', {
        param: field,
        message: `Account ${account.id} belongs to another cardholder than ${esim.cardholder_id}.`,
      })
    await chargedPrice(deps, account, Number(topUp.price), topUp.currency)
  } catch (err) {
    if (isApiError(err) && err.param !== field) throw param(err, field)
    throw err
  }
  return {
    top_up_id: topUp.id,
    account_id: body.account_id,
    trigger: body.trigger,
    threshold_pct: body.threshold_pct ?? null,
    max_per_month: body.max_per_month,
  }
}

/**
 * Inside the usage transaction (the eSIMs' locks held): claims the crossings of auto top-up triggers these applied
 * reports made (one conditional UPDATE of the packages' markers) and queues one job per crossing claimed, in the same
 * transaction. A report repeated, or a concurrent one, finds the marker set and starts nothing. Under a sandbox clock
 * (`clockId`, whose time `now` is) the job waits on the clock and runs in its next advance, at the crossing's time.
 */
export async function claimAutoTopUps(
  trx: Db,
  applied: readonly UsageOutcome[],
  now: Date,
  clockId: string | null = null,
): Promise<repo.ClaimedCrossing[]> {
  const moves = applied
    .filter((o) => o.data_mb !== null && o.bundle_order_id !== null && o.after > o.before)
    .map((o) => ({
      esim_id: o.esim_id!,
      bundle_order_id: o.bundle_order_id!,
      data_mb: o.data_mb!,
      before: o.before,
      after: o.after,
    }))
  const claimed = await repo.claimCrossings(trx, moves, now)
  for (const c of claimed) {
    await enqueue(trx, {
      type: AUTO_TOP_UP_JOB,
      payload: { crossing_order_id: c.crossing_order_id },
      organizationId: c.organization_id,
      environment: c.environment,
      ...(clockId ? { clockId, runAt: now } : {}),
    })
  }
  return claimed
}

/** Announces an auto top-up that did not run (or was refunded), with the eSIM as the transaction left it. */
async function emitFailed(trx: Db, esimId: string, reason: AutoTopUpFailure, now: Date) {
  const fresh = (await esims.findEsim(trx, esimId))!
  const view = presentEsimSummary(fresh, await esims.bundlesOf(trx, [esimId]), now)
  const scope = { ...scopeOfRow(fresh), clockId: fresh.clock_id }
  await emit(trx, scope, 'esim.auto_top_up_failed', view, now, { reason })
}

function failureOf(err: ApiError): AutoTopUpFailure {
  const known: AutoTopUpFailure[] = [
    'insufficient_funds',
    'account_blocked',
    'account_not_found',
    'account_not_provisioned',
    'currency_mismatch',
  ]
  return known.includes(err.code as AutoTopUpFailure)
    ? (err.code as AutoTopUpFailure)
    : 'insufficient_funds'
}

/**
 * The first half of an auto top-up: in one transaction under the eSIM's lock, the account is debited (ledger entry
 * `esim_purchase` with the balance) and the order is written in flight (`pending`, `trigger: auto`, the crossing that
 * started it), and the month's count grows. A crossing writes at most one order (checked under the lock, and unique
 * in the database). Refusals write nothing but `esim.auto_top_up_failed`. Answers the order (new or already written),
 * or null when nothing is to be bought.
 */
export async function openAutoTopUp(
  deps: AppDeps,
  crossingOrderId: string,
): Promise<orders.OrderRow | null> {
  const prior = await repo.orderOfCrossing(deps.db, crossingOrderId)
  if (prior) return prior
  const esimId = await repo.esimOfCrossing(deps.db, crossingOrderId)
  const esim = esimId ? await esims.findEsim(deps.db, esimId) : undefined
  if (!esim || esim.auto_top_up_id === null) return null
  const scope = { ...scopeOfRow(esim), clockId: esim.clock_id }
  // Judged, and converted into the account's currency, before anything is written.
  const topUp = await findTopUp(deps.db, scope, esim.auto_top_up_id)
  let refusal: AutoTopUpFailure | null = topUp && sold(topUp) ? null : 'top_up_unavailable'
  let charged: ChargedPrice | null = null
  if (topUp && !refusal) {
    try {
      const account = await requireAccount(deps.db, scope, esim.auto_top_up_account_id!)
      charged = await chargedPrice(deps, account, Number(topUp.price), topUp.currency)
    } catch (err) {
      if (!isApiError(err)) throw err
      refusal = failureOf(err)
    }
  }
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const locked = await esims.lockEsim(trx, esim.id)
    const done = await repo.orderOfCrossing(trx, crossingOrderId)
    if (done) return done
    // A crossing refused once is done: only the next crossing tries again (a job run twice changes nothing).
    if ((await repo.failureOfCrossing(trx, crossingOrderId)) !== null) return null
    const unchanged =
      locked &&
      locked.auto_top_up_id === esim.auto_top_up_id &&
      locked.auto_top_up_account_id === esim.auto_top_up_account_id &&
      locked.status !== 'canceled' &&
      locked.status !== 'suspended'
    // Turned off or changed since the crossing: the settings of now apply at the next crossing.
    if (!locked || !unchanged) return null
    const refuse = async (reason: AutoTopUpFailure) => {
      await repo.recordFailure(trx, crossingOrderId, reason, now)
      await emitFailed(trx, locked.id, reason, now)
      return null
    }
    if (refusal || !topUp || !charged) return refuse(refusal ?? 'top_up_unavailable')
    const month = monthOf(now)
    const runs = locked.auto_top_up_month === month ? locked.auto_top_up_runs : 0
    if (runs >= (locked.auto_top_up_max_per_month ?? 0)) return refuse('max_per_month_reached')
    const ends = await repo.packageEnds(trx, locked.id, topUp.package_id)
    if (!ends.any || (ends.expires_at !== null && ends.expires_at <= now))
      return refuse('top_up_unavailable')
    const orderId = newId('esord')
    const reference = `auto-${crossingOrderId}`
    try {
      await chargeAccount(
        trx,
        scope,
        {
          orderId,
          accountId: locked.auto_top_up_account_id!,
          price: charged.amount,
          currency: charged.currency,
          reference,
          description: `Auto top-up ${topUp.name}`,
        },
        now,
      )
    } catch (err) {
      // The refusal is thrown before anything is written: the transaction goes on to announce it.
      if (!isApiError(err)) throw err
      return refuse(failureOf(err))
    }
    await orders.insertOrder(trx, {
      id: orderId,
      organization_id: locked.organization_id,
      environment: locked.environment,
      type: 'top_up',
      trigger: 'auto',
      crossing_order_id: crossingOrderId,
      status: 'pending',
      package_id: topUp.package_id,
      top_up_id: topUp.id,
      esim_id: null,
      iccid: null,
      cardholder_id: locked.cardholder_id,
      account_id: locked.auto_top_up_account_id,
      price: Number(topUp.price),
      currency: topUp.currency,
      charged_amount: charged.amount,
      charged_currency: charged.currency,
      fx: charged.fx,
      reference,
      metadata: {},
      failure_reason: null,
      ledger_entry_id: null,
      refunded_at: null,
      // The network's wall time, which settlement measures (`now` is the eSIM's clock's when it is on one).
      network_at: wallTime(esim.clock_id, now),
      created_at: now,
      updated_at: now,
      settled_at: null,
    })
    await repo.countRun(trx, locked.id, month, now)
    return (await orders.findOrder(trx, orderId))!
  })
}

/**
 * A call that timed out: the order is listed unsettled (announced) for settlement to decide. Its `updated_at` is the
 * eSIM's sandbox clock's time when it is on one (`deps.clock` reads it), and the event carries the clock; `network_at`,
 * what settlement measures, is wall time.
 */
async function markUnsettled(
  deps: AppDeps,
  orderId: string,
  clockId: string | null,
): Promise<void> {
  const now = deps.clock.now()
  await withTx(deps.db, async (trx) => {
    const order = await orders.lockOrder(trx, orderId)
    if (!order || order.status !== 'pending') return
    const changes = { status: 'unsettled', network_at: wallTime(clockId, now) }
    const updated = await orders.updateOrder(trx, orderId, changes, now)
    const scope = { ...scopeOfRow(updated), clockId }
    await emit(trx, scope, 'esim_order.created', presentOrder(updated), now)
  })
}

/**
 * The second half: the network call, with no transaction open (the order's id is the network's idempotency key),
 * then its outcome recorded. A timeout leaves the order unsettled for settlement.
 */
export async function provisionAutoTopUp(deps: AppDeps, order: orders.OrderRow): Promise<void> {
  const esimId = await repo.esimOfCrossing(deps.db, order.crossing_order_id!)
  const esim = esimId ? await esims.findEsim(deps.db, esimId) : undefined
  const topUp = await findTopUp(deps.db, PLATFORM_VIEW, order.top_up_id!)
  if (!esim || !topUp) {
    await finishAutoTopUp(deps, order.id, 'failed', 'provisioning_failed')
    return
  }
  let outcome: Awaited<ReturnType<typeof provisionWithDeadline>>
  try {
    outcome = await provisionWithDeadline(deps.esimNetwork, {
      orderId: order.id,
      iccid: esim.iccid,
      smdpAddress: esim.smdp_address,
      matchingId: esim.matching_id,
      packageId: order.package_id,
      dataMb: topUp.data_mb,
      validityDays: topUp.validity_days,
      organizationId: order.organization_id,
      environment: order.environment,
    })
  } catch (err) {
    if (!(err instanceof EsimNetworkTimeout))
      deps.log.error({ err, order_id: order.id }, 'eSIM auto top-up call failed')
    await markUnsettled(deps, order.id, esim.clock_id ?? null)
    return
  }
  await finishAutoTopUp(
    deps,
    order.id,
    outcome.status === 'provisioned' ? 'provisioned' : 'failed',
    outcome.status === 'failed' ? 'provisioning_failed' : null,
  )
}

/**
 * Records the network's outcome for an auto top-up still open, under the eSIM's and then the order's lock (the job
 * and settlement never both apply one). Provisioned: the add-on joins the eSIM as a package running at once,
 * `esim_order.created` (or `.settled` when it had been announced unsettled) and `esim.topped_up`, as a bought one.
 * Failed: the account is credited back (`esim_refund`), the run leaves the month's count, `esim_order.failed` and
 * `esim.auto_top_up_failed`.
 */
export async function finishAutoTopUp(
  deps: AppDeps,
  orderId: string,
  result: 'provisioned' | 'failed',
  reason: string | null,
): Promise<orders.OrderRow | null> {
  const seen = await orders.findOrder(deps.db, orderId)
  const esimId = seen?.crossing_order_id
    ? await repo.esimOfCrossing(deps.db, seen.crossing_order_id)
    : null
  if (!seen || !esimId) return seen ?? null
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const clockId = (await esims.lockEsim(trx, esimId))?.clock_id ?? null
    const order = await orders.lockOrder(trx, orderId)
    if (!order || (order.status !== 'pending' && order.status !== 'unsettled')) return order ?? null
    const scope = { ...scopeOfRow(order), clockId }
    const wasUnsettled = order.status === 'unsettled'
    const topUp = await findTopUp(trx, PLATFORM_VIEW, order.top_up_id!)
    if (result === 'provisioned' && topUp) {
      const ends = await repo.packageEnds(trx, esimId, order.package_id)
      const expiresAt =
        topUp.validity_days > 0
          ? new Date(now.getTime() + topUp.validity_days * DAY_MS)
          : ends.expires_at
      await esims.insertBundle(trx, {
        order_id: order.id,
        esim_id: esimId,
        package_id: order.package_id,
        status: 'running',
        data_mb: topUp.data_mb,
        data_used_mb: 0,
        alerted_pct: [],
        auto_top_up_claimed_at: null,
        auto_top_up_failure: null,
        activated_at: now,
        expires_at: expiresAt,
        created_at: now,
        updated_at: now,
      })
      await esims.touchEsim(trx, esimId, now)
      await esims.extendValidity(trx, esimId, expiresAt, now)
      const completed = await orders.updateOrder(
        trx,
        order.id,
        { status: 'completed', esim_id: esimId, settled_at: now },
        now,
      )
      const type = wasUnsettled ? 'esim_order.settled' : 'esim_order.created'
      await emit(trx, scope, type, presentOrder(completed), now)
      const fresh = (await esims.findEsim(trx, esimId))!
      const view = presentEsimSummary(fresh, await esims.bundlesOf(trx, [esimId]), now)
      await emit(trx, scope, 'esim.topped_up', view, now)
      return completed
    }
    if (order.account_id !== null && order.charged_amount !== null) {
      await refundAccount(
        trx,
        scope,
        {
          orderId: order.id,
          accountId: order.account_id,
          price: Number(order.charged_amount),
          currency: order.charged_currency ?? order.currency,
          reference: order.reference,
          description: `Auto top-up ${topUp?.name ?? order.top_up_id} not provisioned`,
        },
        now,
      )
    }
    await repo.uncountRun(trx, esimId, monthOf(order.created_at), now)
    const failed = await orders.updateOrder(
      trx,
      order.id,
      { status: 'failed', failure_reason: reason ?? 'provisioning_failed', settled_at: now },
      now,
    )
    await emit(trx, scope, 'esim_order.failed', presentOrder(failed), now)
    await emitFailed(trx, esimId, 'provisioning_failed', now)
    return failed
  })
}

/**
 * Settlement of an open auto top-up (the `esim.settle_orders` sweep): from the network's record; an order still in
 * flight whose process died before the network recorded it is provisioned again under the same order id (the network
 * applies an order once), so an interrupted top-up completes exactly once and its debit is never lost.
 */
export async function settleAutoTopUp(
  wall: AppDeps,
  order: orders.OrderRow,
  status: NetworkOrderStatus,
  force: boolean,
): Promise<orders.OrderRow | 'retry' | null> {
  // Settlement runs on wall time: a top-up of an eSIM under a sandbox clock is recorded on the clock's time.
  const esimId = await repo.esimOfCrossing(wall.db, order.crossing_order_id!)
  const esim = esimId ? await esims.findEsim(wall.db, esimId) : undefined
  const deps = await onClock(wall, esim?.clock_id)
  if (status === 'unknown' && order.status === 'pending') {
    await provisionAutoTopUp(deps, order)
    return (await orders.findOrder(deps.db, order.id)) ?? null
  }
  if (status === 'unknown' && !force && stillAskingNetwork(order, wall.clock.now())) return 'retry'
  const reason =
    status === 'failed' ? 'provisioning_failed' : status === 'unknown' ? 'network_no_record' : null
  return finishAutoTopUp(
    deps,
    order.id,
    status === 'provisioned' ? 'provisioned' : 'failed',
    reason,
  )
}

/** Runs the top-up a crossing started: both halves; a second run finds the order written and settles nothing twice. */
export async function runAutoTopUp(deps: AppDeps, crossingOrderId: string): Promise<void> {
  const order = await openAutoTopUp(deps, crossingOrderId)
  if (order && order.status === 'pending') await provisionAutoTopUp(deps, order)
}

/** `esim.auto_top_up` jobs: one per crossing claimed; a retry after a crash finds the order already written. */
export async function runAutoTopUpJob(deps: AppDeps, job: JobRecord): Promise<JobOutcome> {
  await runAutoTopUp(deps, String(job.payload.crossing_order_id))
}
