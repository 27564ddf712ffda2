import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { CreatedWindow } from '../../db/created-window.js'
import { isUniqueViolation } from '../../db/tx.js'
import {
  EsimNetworkTimeout,
  PROVISIONING_DEADLINE_MS,
  provisionWithDeadline,
  type ProvisionOutcome,
} from '../../esim-network/port.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { autonomousDb } from '../../http/request-unit.js'
import { paginate, type ListResult } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import { requireCardholder } from '../cardholders/index.js'
import { checkPayingAccount } from './billing.js'
import * as repo from './orders-repo.js'
import { requireOrderablePackage } from './packages-service.js'
import { presentOrder, type OrderView } from './present.js'
import type { OrderCreateRequest, OrderListQuery } from './schemas.js'
import { abandonOrder, finishOrder, markUnsettled } from './settlement.js'

type CreateBody = Static<typeof OrderCreateRequest>

/** 409 when the reference is taken: the database decides, so concurrent requests cannot both win. */
export function referenceError(err: unknown, reference: string): ApiError | null {
  if (!isUniqueViolation(err, repo.REFERENCE_CONSTRAINT)) return null
  return new ApiError('esim_order_reference_exists', {
    param: 'reference',
    message: `An eSIM order or top-up of your organization already has the reference "${reference}".`,
  })
}

/**
 * Orders a package: checks everything that can be refused for free, reserves a blank profile and writes
 * the order as in flight (one statement), calls the network with no transaction open, then records the
 * outcome. A 201 means the eSIM is ready; any refusal or failure leaves nothing bought and
 * the profile back in stock, except a timeout, which leaves the order unsettled for the settlement job.
 */
export async function createOrder(
  deps: AppDeps,
  ctx: RequestCtx,
  body: CreateBody,
): Promise<OrderView> {
  const requested = body.cardholder_id ?? null
  // The cardholder's sandbox clock, when the order names one (else the account's cardholder's, read at completion).
  const clockId =
    requested !== null
      ? (await requireCardholder(deps.db, ctx, requested, 'cardholder_id')).clock_id
      : undefined
  const orderId = newId('esord')
  let reservation: repo.Reservation = { package: null, profile: null, repriced: true }
  // A price changed between the check and the reservation reserves nothing: the charge is computed again.
  for (let attempt = 0; reservation.repriced && attempt < 3; attempt++) {
    let cardholderId = requested
    let charge: repo.ReservationInput['charge'] = null
    if (body.account_id !== undefined) {
      // The account is judged against the price (converted into its currency) before anything is reserved.
      const listed = await requireOrderablePackage(deps, ctx, body.package_id)
      const price = Number(listed.price)
      const paying = await checkPayingAccount(
        deps,
        ctx,
        body.account_id,
        price,
        listed.currency,
        cardholderId,
      )
      cardholderId ??= paying.account.cardholder_id
      charge = { price, ...paying.charged }
    }
    try {
      reservation = isId('pkg', body.package_id)
        ? // The reservation is the order's intent: it commits at once, so a crash during the network call leaves it to settle.
          await repo.reserveOrder(autonomousDb(deps), {
            id: orderId,
            organizationId: ctx.organizationId,
            environment: ctx.environment,
            packageId: body.package_id,
            cardholderId,
            accountId: body.account_id ?? null,
            charge,
            reference: body.reference,
            metadata: body.metadata ?? {},
            now: deps.clock.now(),
          })
        : { package: null, profile: null }
    } catch (err) {
      throw referenceError(err, body.reference) ?? err
    }
  }
  const { package: pkg, profile } = reservation
  if (!pkg) {
    // Explains the refusal (unknown, or not on sale); the reservation wrote nothing.
    await requireOrderablePackage(deps, ctx, body.package_id)
    throw new ApiError('esim_package_unavailable', { param: 'package_id' })
  }
  if (!profile)
    throw new ApiError('esim_inventory_exhausted', {
      message: 'No eSIM is left to provision; nothing was charged. Retry once stock returns.',
    })

  let outcome: ProvisionOutcome
  try {
    // The network is another system: the unit has not begun, and the simulator keeps its records on its own handle.
    outcome = await provisionWithDeadline(deps.esimNetwork, {
      orderId,
      iccid: profile.iccid,
      smdpAddress: profile.smdp_address,
      matchingId: profile.matching_id,
      packageId: pkg.id,
      dataMb: pkg.data_mb,
      validityDays: pkg.validity_days,
      organizationId: ctx.organizationId,
      environment: ctx.environment,
    })
  } catch (err) {
    // A timeout, or an adapter failure after the request may have left: the outcome is unknown.
    if (!(err instanceof EsimNetworkTimeout))
      deps.log.error({ err, order_id: orderId }, 'eSIM provisioning call failed')
    await markUnsettled({ ...deps, db: autonomousDb(deps) }, orderId)
    throw new ApiError('processor_unavailable', {
      message: `The eSIM network did not answer in time. Order ${orderId} is unsettled and will be settled shortly; look it up by your reference before retrying.`,
      detail: err,
    })
  }

  if (outcome.status === 'failed') {
    await abandonOrder({ ...deps, db: autonomousDb(deps) }, orderId)
    throw new ApiError('processor_unavailable', {
      message:
        'The eSIM network could not provision the profile. Nothing was bought; retry the order.',
      detail: outcome.reason,
    })
  }
  const { order, refusal } = await finishOrder(
    deps,
    orderId,
    'provisioned',
    null,
    'request',
    body.account_id ?? null,
    requested !== null ? clockId : body.account_id === undefined ? null : undefined,
  )
  if (refusal) throw refusal
  if (!order || order.status !== 'completed') {
    throw new ApiError('processor_unavailable', {
      message: `Order ${orderId} was settled as ${order?.status ?? 'failed'} while it was being provisioned.`,
    })
  }
  return presentOrder(order)
}

/**
 * An order is not shown while its create call may still answer (interface: an order appears without an eSIM only
 * after the network timed out; a refusal means it never existed). Past the call's deadline an order still in
 * flight belongs to a process that died: it reads as unsettled until settlement decides it.
 */
const IN_FLIGHT_HIDDEN_MS = PROVISIONING_DEADLINE_MS + 2_000

function inFlightShownBefore(deps: AppDeps): Date {
  return new Date(deps.clock.now().getTime() - IN_FLIGHT_HIDDEN_MS)
}

export async function requireOrder(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<repo.OrderRow> {
  const row = isId('esord', id) ? await repo.findOrder(deps.db, id) : undefined
  const shown =
    row &&
    (row.status !== 'pending' ||
      (row.network_at !== null && new Date(row.network_at) < inFlightShownBefore(deps)))
      ? row
      : undefined
  return requireOwned(shown, ctx, 'esim_order_not_found')
}

export async function retrieveOrder(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<OrderView> {
  return presentOrder(await requireOrder(deps, ctx, id))
}

export async function listOrders(
  deps: AppDeps,
  ctx: RequestCtx,
  query: Static<typeof OrderListQuery>,
): Promise<ListResult<OrderView>> {
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/esim/orders',
    page: query,
    sortKey: (r: repo.OrderRow) => r.id,
    fetch: (bounds) =>
      repo.listOrders(
        deps.db,
        ctx.organizationId,
        ctx.environment,
        {
          reference: query.reference,
          status: query.status,
          cardholderId: query.cardholder_id,
          trigger: query.trigger,
          inFlightShownBefore: inFlightShownBefore(deps),
        },
        bounds,
      ),
    present: presentOrder,
  })
}

/** What the operator's health page shows of orders the network has not settled yet. */
export interface UnsettledOrders {
  count: number
  oldest: {
    id: string
    organization_id: string
    environment: string
    status: string
    created_at: Date
  } | null
}

/**
 * The platform's unsettled orders (any organization): those whose create call timed out, and those still in flight
 * past the call's deadline (their process died), as the API shows them; the oldest first. Settlement should keep
 * this near zero: an old one means the network has no answer for it.
 */
export async function unsettledOrders(deps: AppDeps): Promise<UnsettledOrders> {
  return repo.unsettledOrders(deps.db, inFlightShownBefore(deps))
}

/** The caller's orders created in [from, to), oldest first, in keyset batches: the `esim_orders` report reads these. */
export async function ordersCreatedIn(deps: AppDeps, window: CreatedWindow): Promise<OrderView[]> {
  return (await repo.ordersCreatedIn(deps.db, window)).map(presentOrder)
}
