import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow } from '../../http/context.js'
import { type ApiError, isApiError } from '../../http/errors.js'
import { newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import type { ScheduleType } from '../../jobs/types.js'
import { emit } from '../events/index.js'
import { settleAutoTopUp, stillAskingNetwork } from './auto-top-up.js'
import { chargeAccount } from './billing.js'
import { returnProfile } from './inventory.js'
import * as repo from './orders-repo.js'
import { findPackage, PLATFORM_VIEW } from './packages-repo.js'
import { presentOrder } from './present.js'

export const SETTLE_SCHEDULE = 'esim.settle_orders' satisfies ScheduleType
/** How often the settlement job looks for open orders: an unsettled order is settled within seconds, not minutes. */
export const SETTLE_EVERY_MS = 5_000
/** An unsettled order (its create call answered 502) is settled once it has been listed this long. */
const UNSETTLED_AFTER_MS = 5_000
/** An in-flight order older than this has outlived its create call (whose deadline is 10 s): its process died. */
const PENDING_AFTER_MS = 20_000

const OPEN = new Set(['pending', 'unsettled'])

/**
 * Marks an in-flight order unsettled after a timeout; it is now listed, and the caller was told so. Under a sandbox
 * clock its `updated_at` is the clock's time and the event names the clock; `network_at`, what settlement measures,
 * is wall time.
 */
export async function markUnsettled(deps: AppDeps, orderId: string): Promise<void> {
  const wallNow = deps.clock.now()
  await withTx(deps.db, async (trx) => {
    const order = await repo.lockOrder(trx, orderId)
    if (!order || order.status !== 'pending') return
    const now = (await onClock({ ...deps, db: trx }, order.clock_id)).clock.now()
    const changes = { status: 'unsettled', network_at: wallNow }
    const updated = await repo.updateOrder(trx, orderId, changes, now)
    const scope = { ...scopeOfRow(updated), clockId: order.clock_id }
    await emit(trx, scope, 'esim_order.created', presentOrder(updated), now)
  })
}

/** The network refused synchronously: the order never happened (its reference is free again) and the profile returns to stock. */
export async function abandonOrder(deps: AppDeps, orderId: string): Promise<void> {
  const now = deps.clock.now()
  await withTx(deps.db, async (trx) => {
    const order = await repo.lockOrder(trx, orderId)
    if (!order || order.status !== 'pending') return
    await repo.deleteOrder(trx, orderId)
    if (order.iccid) await returnProfile(trx, order.iccid, now)
  })
}

/**
 * Records the network's outcome for an order still open, under the order's row lock, so the request and
 * the settlement job never both apply one. `request`: the create call's own outcome (a refusal deletes
 * the order, nothing was bought); `settlement`: an unsettled order becomes completed or failed for good.
 * `paidBy`: the request's account (null: the organization is billed), when the caller knows it; `clockId`: the
 * sandbox clock of the order's cardholder when the caller knows it (else the order's lock reads it). An order under a
 * clock lives on the clock's time from its reservation (`network_at` keeps the network's wall time, which settlement
 * measures): it completes or fails at the clock's time, as do its eSIM's and package's times.
 */
export async function finishOrder(
  deps: AppDeps,
  orderId: string,
  result: 'provisioned' | 'failed',
  reason: string | null,
  via: 'request' | 'settlement',
  paidBy?: string | null,
  clockId?: string | null,
): Promise<{ order: repo.OrderRow | null; refusal?: ApiError }> {
  const wallNow = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const timeOf = async (clock: string | null) =>
      clock ? (await onClock({ ...deps, db: trx }, clock)).clock.now() : wallNow
    if (result === 'provisioned' && via === 'request' && paidBy === null && clockId !== undefined) {
      // The common case, with nothing to debit: the completing statement itself checks that the order is still open.
      const now = await timeOf(clockId)
      const completed = await repo.completeOrder(trx, orderId, newId('esim'), now)
      if (!completed) return { order: (await repo.findOrder(trx, orderId)) ?? null }
      const scope = { ...scopeOfRow(completed), clockId }
      await emit(trx, scope, 'esim_order.created', presentOrder(completed), now)
      return { order: completed }
    }
    const order = await repo.lockOrder(trx, orderId)
    if (!order || !OPEN.has(order.status)) return { order: order ?? null }
    const now = await timeOf(order.clock_id)
    const scope = { ...scopeOfRow(order), clockId: order.clock_id }
    const wasUnsettled = order.status === 'unsettled'
    if (result === 'provisioned') {
      try {
        if (order.account_id) {
          const pkg = await findPackage(trx, PLATFORM_VIEW, order.package_id)
          await chargeAccount(
            trx,
            scope,
            {
              orderId: order.id,
              accountId: order.account_id,
              // What the order was charged at order time, in the account's currency (its price when the same).
              price: Number(order.charged_amount ?? order.price),
              currency: order.charged_currency ?? order.currency,
              reference: order.reference,
              description: pkg?.name ?? order.package_id,
            },
            now,
          )
        }
        const completed = (await repo.completeOrder(trx, order.id, newId('esim'), now))!
        const view = presentOrder(completed)
        const type = via === 'request' ? 'esim_order.created' : 'esim_order.settled'
        await emit(trx, scope, type, view, now)
        return { order: completed }
      } catch (err) {
        // The account refused the debit (checked before, changed since): nothing is bought.
        if (!isApiError(err)) throw err
        if (via === 'request') {
          await repo.deleteOrder(trx, orderId)
          if (order.iccid) await returnProfile(trx, order.iccid, now)
          return { order: null, refusal: err }
        }
        reason = err.code
      }
    }
    if (via === 'request' && !wasUnsettled) {
      await repo.deleteOrder(trx, orderId)
      if (order.iccid) await returnProfile(trx, order.iccid, now)
      return { order: null }
    }
    if (order.iccid) await returnProfile(trx, order.iccid, now)
    const failed = await repo.updateOrder(
      trx,
      orderId,
      { status: 'failed', failure_reason: reason ?? 'provisioning_failed', settled_at: now },
      now,
    )
    await emit(trx, scope, 'esim_order.failed', presentOrder(failed), now)
    return { order: failed }
  })
}

/**
 * Settles an open order from what the network says happened. Answers `retry` while the network has no
 * answer yet (unless `force`, the sandbox's "settle now": no record at the network means nothing was provisioned).
 */
export async function settleOrder(
  deps: AppDeps,
  orderId: string,
  options: { force?: boolean } = {},
): Promise<repo.OrderRow | 'retry' | null> {
  const order = await repo.findOrder(deps.db, orderId)
  if (!order || !OPEN.has(order.status)) return order ?? null
  const status = await deps.esimNetwork.orderStatus(orderId)
  if (order.trigger === 'auto') return settleAutoTopUp(deps, order, status, options.force ?? false)
  if (status === 'unknown' && !options.force && stillAskingNetwork(order, deps.clock.now()))
    return 'retry'
  const result = status === 'provisioned' ? 'provisioned' : 'failed'
  const reason =
    status === 'failed' ? 'provisioning_failed' : status === 'unknown' ? 'network_no_record' : null
  return (await finishOrder(deps, orderId, result, reason, 'settlement')).order
}

/**
 * The settlement job: every open order whose create call has ended (timed out, or its process died) is
 * settled from the network's record. An order the network cannot answer for yet waits for the next run.
 */
export async function settleOpenOrders(deps: AppDeps): Promise<number> {
  const now = deps.clock.now().getTime()
  const ids = await repo.openOrdersBefore(
    deps.db,
    new Date(now - UNSETTLED_AFTER_MS),
    new Date(now - PENDING_AFTER_MS),
    200,
  )
  let settled = 0
  for (const id of ids) {
    try {
      const result = await settleOrder(deps, id)
      if (result !== 'retry') settled++
    } catch (err) {
      deps.log.error({ err, order_id: id }, 'eSIM order settlement failed')
    }
  }
  return settled
}
