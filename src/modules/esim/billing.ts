import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import {
  availableBalance,
  presentAccount,
  requireAccount,
  type AccountRow,
} from '../accounts/index.js'
import { type EventScope, emit } from '../events/index.js'
import { applySettledMovement } from '../ledger/index.js'

/**
 * Paying for an eSIM from a stored-value account. The account is checked before anything is reserved
 * (a refusal costs nothing), and debited again under its row lock in the transaction that completes the order.
 */
export async function checkPayingAccount(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  price: number,
  currency: string,
  cardholderId: string | null,
): Promise<AccountRow> {
  const account = await requireAccount(deps.db, ctx, accountId, 'account_id')
  if (cardholderId !== null && account.cardholder_id !== cardholderId) {
    throw new ApiError('account_cardholder_mismatch', {
      param: 'account_id',
      message: `Account ${account.id} belongs to another cardholder than ${cardholderId}.`,
    })
  }
  if (account.currency !== currency) {
    throw new ApiError('currency_mismatch', {
      param: 'account_id',
      message: `The account holds ${account.currency}; this eSIM is priced in ${currency}.`,
    })
  }
  if (account.upstream_reference === null)
    throw new ApiError('account_not_provisioned', { param: 'account_id' })
  if (account.status !== 'open') throw new ApiError('account_blocked', { param: 'account_id' })
  const available = availableBalance(account)
  if (available < price) {
    throw new ApiError('insufficient_funds', {
      param: 'account_id',
      message: `The available balance (${available}) is lower than the price (${price}).`,
    })
  }
  return account
}

export interface Charge {
  orderId: string
  accountId: string
  price: number
  currency: string
  reference: string
  description: string
}

/** Debits the price inside the caller's transaction (ledger entry `esim_purchase`); throws the refusal, writing nothing. */
export async function chargeAccount(
  trx: Db,
  scope: EventScope,
  charge: Charge,
  now: Date,
): Promise<void> {
  const account = await applySettledMovement(
    trx,
    {
      accountId: charge.accountId,
      type: 'esim_purchase',
      amount: -charge.price,
      currency: charge.currency,
      sourceId: charge.orderId,
      reference: charge.reference,
      description: charge.description,
    },
    now,
  )
  await emit(trx, scope, 'account.debited', presentAccount(account), now)
}
