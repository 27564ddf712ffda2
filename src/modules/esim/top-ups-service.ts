import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import { emit } from '../events/index.js'
import { chargeAccount, checkPayingAccount } from './billing.js'
import * as esims from './esims-repo.js'
import { bundleStatus, presentEsimSummary, requireEsim } from './esims-service.js'
import * as orders from './orders-repo.js'
import { referenceError } from './orders-service.js'
import {
  findTopUp,
  listSoldTopUps,
  presentTopUp,
  viewOf,
  type TopUpRow,
  type TopUpView,
} from './packages-service.js'
import { presentOrder, type OrderView } from './present.js'
import type { TopUpPurchaseRequest } from './schemas.js'

const DAY_MS = 24 * 60 * 60 * 1000

function runningPackageIds(bundles: esims.BundleRow[], now: Date): string[] {
  return [
    ...new Set(bundles.filter((b) => bundleStatus(b, now) === 'running').map((b) => b.package_id)),
  ]
}

/** The add-ons this eSIM accepts right now: sold, and extending a package that is running on it. */
export async function listTopUpOffers(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
  page: PageParams,
): Promise<ListResult<TopUpView>> {
  const esim = await requireEsim(deps.db, ctx, esimId)
  const now = (await onClock(deps, esim.clock_id)).clock.now()
  const packageIds = runningPackageIds(await esims.bundlesOf(deps.db, [esim.id]), now)
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: `/v1/esim/esims/${esim.id}/top_ups`,
    page,
    sortKey: (r: TopUpRow) => r.id,
    fetch: (bounds) => listSoldTopUps(deps, viewOf(ctx), packageIds, bounds),
    present: presentTopUp,
  })
}

/** The offers for one eSIM without paging (the hosted page shows them all; there are a handful). */
export async function offersForEsim(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
): Promise<TopUpView[]> {
  const esim = await requireEsim(deps.db, ctx, esimId)
  const now = (await onClock(deps, esim.clock_id)).clock.now()
  const packageIds = runningPackageIds(await esims.bundlesOf(deps.db, [esim.id]), now)
  const rows = await listSoldTopUps(deps, viewOf(ctx), packageIds, { take: 50, reverse: false })
  return rows.map(presentTopUp)
}

function unavailable(message: string): ApiError {
  return new ApiError('esim_top_up_unavailable', { param: 'top_up_id', message })
}

/**
 * Buys an add-on for a running package: no network call, nothing installed and no new activation code. The
 * eSIM gains a package entry for it (running at once) in the same transaction as the order, the debit and the events.
 */
export async function purchaseTopUp(
  wall: AppDeps,
  ctx: RequestCtx,
  esimId: string,
  body: Static<typeof TopUpPurchaseRequest>,
): Promise<OrderView> {
  const esim = await requireEsim(wall.db, ctx, esimId)
  // Under a sandbox clock the add-on is bought, runs and expires on the clock's time.
  const deps = await onClock(wall, esim.clock_id)
  const scope = { ...ctx, clockId: esim.clock_id }
  if (esim.status === 'canceled')
    throw new ApiError('esim_invalid_state', { message: `eSIM ${esim.id} is canceled.` })
  const topUp = await findTopUp(deps, viewOf(ctx), body.top_up_id)
  if (!topUp) throw unavailable(`${body.top_up_id} is not an add-on sold by this platform.`)
  if (topUp.effective_status !== 'on_sale' || topUp.package_status === 'withdrawn')
    throw unavailable(`${topUp.id} is no longer sold.`)
  const check = (bundles: esims.BundleRow[], now: Date) => {
    const bundle = bundles.find(
      (b) => b.package_id === topUp.package_id && bundleStatus(b, now) === 'running',
    )
    if (!bundle)
      throw unavailable(
        `${topUp.id} extends ${topUp.package_id}, which is not running on ${esim.id}.`,
      )
    return bundle
  }
  check(await esims.bundlesOf(deps.db, [esim.id]), deps.clock.now())
  const price = Number(topUp.price)
  // Judged, and converted into the account's currency, before anything is written.
  const charged =
    body.account_id === undefined
      ? null
      : (
          await checkPayingAccount(
            deps,
            ctx,
            body.account_id,
            price,
            topUp.currency,
            esim.cardholder_id,
          )
        ).charged

  try {
    return await withTx(deps.db, async (trx) => {
      const now = deps.clock.now()
      const locked = requireOwned(await esims.lockEsim(trx, esim.id), ctx, 'esim_not_found')
      const bundle = check(await esims.bundlesOf(trx, [locked.id]), now)
      const orderId = newId('esord')
      await orders.insertOrder(trx, {
        id: orderId,
        organization_id: ctx.organizationId,
        environment: ctx.environment,
        type: 'top_up',
        trigger: 'manual',
        crossing_order_id: null,
        status: 'completed',
        package_id: topUp.package_id,
        top_up_id: topUp.id,
        esim_id: locked.id,
        iccid: locked.iccid,
        cardholder_id: locked.cardholder_id,
        account_id: body.account_id ?? null,
        price,
        currency: topUp.currency,
        charged_amount: charged?.amount ?? null,
        charged_currency: charged?.currency ?? null,
        fx: charged?.fx ?? null,
        reference: body.reference,
        metadata: body.metadata ?? {},
        failure_reason: null,
        ledger_entry_id: null,
        refunded_at: null,
        // Completed at once: never open, nothing for settlement to measure.
        network_at: null,
        created_at: now,
        updated_at: now,
        settled_at: now,
      })
      if (body.account_id !== undefined && charged) {
        await chargeAccount(
          trx,
          scope,
          {
            orderId,
            accountId: body.account_id,
            price: charged.amount,
            currency: charged.currency,
            reference: body.reference,
            description: `${bundle.package_name} ${topUp.name}`,
          },
          now,
        )
      }
      // The add-on joins the eSIM as a package of its own, running at once beside the one it extends: its data
      // is usable now, for its own validity (0 days: until the extended package expires).
      const expiresAt =
        topUp.validity_days > 0
          ? new Date(now.getTime() + topUp.validity_days * DAY_MS)
          : bundle.expires_at
      await esims.insertBundle(trx, {
        order_id: orderId,
        esim_id: locked.id,
        package_id: topUp.package_id,
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
      await esims.touchEsim(trx, locked.id, now)
      await esims.extendValidity(trx, locked.id, expiresAt, now)
      const order = (await orders.findOrder(trx, orderId))!
      const view = presentOrder(order)
      await emit(trx, scope, 'esim_order.created', view, now)
      const fresh = (await esims.findEsim(trx, locked.id))!
      await emit(
        trx,
        scope,
        'esim.topped_up',
        presentEsimSummary(fresh, await esims.bundlesOf(trx, [locked.id]), now),
        now,
      )
      return view
    })
  } catch (err) {
    throw referenceError(err, body.reference) ?? err
  }
}
