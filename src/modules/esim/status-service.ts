import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { onClock } from '../../lib/object-clock.js'
import { EsimNetworkTimeout, withDeadline, type ProfileRequest } from '../../esim-network/port.js'
import { refundAccount } from './billing.js'
import * as esims from './esims-repo.js'
import { presentEsim, requireEsim, type EsimView } from './esims-service.js'
import { emitAboutEsim, lockOwnedEsim, refuseCanceled } from './lifecycle-service.js'
import * as orders from './orders-repo.js'
import { findPackage, PLATFORM_VIEW } from './packages-repo.js'

/**
 * `POST /v1/esim/esims/{id}/cancel`: only an eSIM never installed and on which nothing was used. Every order that put
 * a package on it is refunded in the same transaction: the account that paid is credited what it was charged (ledger
 * entry `esim_refund`, `account.credited`), an order billed to the organization is marked refunded (`refunded_at`: left
 * off the bill). The eSIM and its packages become `canceled` (final) and `esim.canceled` is emitted. Canceling again
 * answers the canceled eSIM, refunding nothing twice.
 */
export async function cancelEsim(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
): Promise<EsimView> {
  const esim = await requireEsim(deps.db, ctx, esimId)
  const now = (await onClock(deps, esim.clock_id)).clock.now()
  return withTx(deps.db, async (trx) => {
    const locked = await lockOwnedEsim(trx, ctx, esim.id)
    if (locked.status !== 'canceled') {
      if (locked.installed_at !== null || locked.first_used_at !== null)
        throw new ApiError('esim_invalid_state', {
          message: `eSIM ${locked.id} was installed on a device: it can no longer be canceled.`,
        })
      if (await esims.anyDataUsed(trx, locked.id))
        throw new ApiError('esim_invalid_state', {
          message: `Data was used on eSIM ${locked.id}: it can no longer be canceled.`,
        })
      for (const order of await orders.refundableOrdersOf(trx, locked.id)) {
        if (order.account_id !== null) {
          const pkg = await findPackage(trx, PLATFORM_VIEW, order.package_id)
          await refundAccount(
            trx,
            { ...scopeOfRow(order), clockId: locked.clock_id },
            {
              orderId: order.id,
              accountId: order.account_id,
              price: Number(order.charged_amount ?? order.price),
              currency: order.charged_currency ?? order.currency,
              reference: order.reference,
              description: `Refund: ${pkg?.name ?? order.package_id}${order.top_up_id ? ' top-up' : ''}`,
            },
            now,
          )
        }
        await orders.markRefunded(trx, order.id, now)
      }
      await esims.setCanceled(trx, locked.id, now)
      await emitAboutEsim(trx, ctx, locked.id, 'esim.canceled', now)
    }
    const fresh = (await esims.findEsim(trx, locked.id))!
    return presentEsim(fresh, await esims.bundlesOf(trx, [locked.id]), now)
  })
}

type NetworkOperation = 'suspend' | 'resume'

/** Calls the network's `suspend` or `resume` outside any transaction; an adapter without it is `operation_unsupported`. */
async function callNetwork(
  deps: AppDeps,
  operation: NetworkOperation,
  request: ProfileRequest,
): Promise<void> {
  const call = deps.esimNetwork[operation]
  if (!call)
    throw new ApiError('operation_unsupported', {
      message: `The eSIM network of this deployment cannot ${operation} a profile.`,
    })
  try {
    await withDeadline(call.call(deps.esimNetwork, request))
  } catch (err) {
    if (err instanceof ApiError) throw err
    throw new ApiError('processor_unavailable', {
      message:
        err instanceof EsimNetworkTimeout
          ? `The eSIM network did not answer the ${operation} in time; nothing changed here. Retry.`
          : `The eSIM network refused to ${operation} the profile; nothing changed here. Retry.`,
      detail: err,
    })
  }
}

/**
 * `POST /v1/esim/esims/{id}/suspend` and `/resume`: the network bars the profile (no data flows, usage reports are
 * refused) or lets it back, then the status changes (`suspended`, or back to what it was) with `esim.updated`. Asking
 * for the status the eSIM already has answers it unchanged, without calling the network.
 */
export async function changeSuspension(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
  operation: NetworkOperation,
): Promise<EsimView> {
  const esim = await requireEsim(deps.db, ctx, esimId)
  refuseCanceled(esim)
  const now = (await onClock(deps, esim.clock_id)).clock.now()
  const wanted = operation === 'suspend'
  if ((esim.status === 'suspended') !== wanted) {
    await callNetwork(deps, operation, {
      esimId: esim.id,
      iccid: esim.iccid,
      organizationId: esim.organization_id,
      environment: esim.environment,
    })
  }
  return withTx(deps.db, async (trx) => {
    const locked = await lockOwnedEsim(trx, ctx, esim.id)
    refuseCanceled(locked)
    if ((locked.status === 'suspended') !== wanted) {
      if (wanted) await esims.setSuspended(trx, locked.id, now)
      else await esims.setResumed(trx, locked.id, now)
      await emitAboutEsim(trx, ctx, locked.id, 'esim.updated', now)
    }
    const fresh = (await esims.findEsim(trx, locked.id))!
    return presentEsim(fresh, await esims.bundlesOf(trx, [locked.id]), now)
  })
}
