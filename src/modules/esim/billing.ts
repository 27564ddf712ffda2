import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { convertAtQuote, type FxDetailsValue } from '../../http/fx-details.js'
import { fxRefusal } from '../../http/fx-errors.js'
import {
  availableBalance,
  presentAccount,
  requireAccount,
  type AccountRow,
} from '../accounts/index.js'
import { type EventScope, emit } from '../events/index.js'
import { applySettledMovement } from '../ledger/index.js'
import { findProgram } from '../programs/index.js'

/** What an order paid from an account is charged, in the account's currency; `fx` null when the price is in it. */
export interface ChargedPrice {
  amount: number
  currency: string
  fx: FxDetailsValue | null
}

function currencyMismatch(account: AccountRow, currency: string): ApiError {
  return new ApiError('currency_mismatch', {
    param: 'account_id',
    message: `The account holds ${account.currency}; this eSIM is priced in ${currency}, and its program does not spend in other currencies.`,
  })
}

/**
 * The price in the paying account's currency, converted at order time when the price is in another: at the rate
 * the account's program's processor gives (the sandbox rate table, or the organization's pinned rate), with the
 * program's markup. A program whose `foreign_spend` is `blocked` refuses (`currency_mismatch`).
 */
export async function chargedPrice(
  deps: AppDeps,
  account: AccountRow,
  price: number,
  currency: string,
): Promise<ChargedPrice> {
  if (account.currency === currency) return { amount: price, currency, fx: null }
  const program = await findProgram(deps.db, account.program_id)
  if (!program || program.foreign_spend === 'blocked') throw currencyMismatch(account, currency)
  const processor = deps.processors.forProgram(program)
  const at = deps.clock.now()
  const quote = await processor.fxRate(scopeOfRow(account), currency, account.currency, at)
  try {
    const converted = convertAtQuote(quote, {
      amount: price,
      from: currency,
      to: account.currency,
      markupBps: program.fx_markup_bps,
    })
    return { ...converted, currency: account.currency }
  } catch (err) {
    return fxRefusal(err)
  }
}

/**
 * Paying for an eSIM from a stored-value account. The account is checked before anything is reserved
 * (a refusal costs nothing), and debited again under its row lock in the transaction that completes the order.
 * A price in another currency than the account's is converted now (`chargedPrice`); the order keeps what it is
 * charged, and the balance is judged against that.
 */
export async function checkPayingAccount(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  price: number,
  currency: string,
  cardholderId: string | null,
): Promise<{ account: AccountRow; charged: ChargedPrice }> {
  const account = await requireAccount(deps.db, ctx, accountId, 'account_id')
  if (cardholderId !== null && account.cardholder_id !== cardholderId) {
    throw new ApiError('account_cardholder_mismatch', {
      param: 'account_id',
      message: `Account ${account.id} belongs to another cardholder than ${cardholderId}.`,
    })
  }
  const charged = await chargedPrice(deps, account, price, currency)
  if (account.upstream_reference === null)
    throw new ApiError('account_not_provisioned', { param: 'account_id' })
  if (account.status !== 'open') throw new ApiError('account_blocked', { param: 'account_id' })
  const available = availableBalance(account)
  if (available < charged.amount) {
    throw new ApiError('insufficient_funds', {
      param: 'account_id',
      message: `The available balance (${available}) is lower than the price (${charged.amount} ${charged.currency}).`,
    })
  }
  return { account, charged }
}

export interface Charge {
  orderId: string
  accountId: string
  /** What the order is charged, in the account's currency (`charged_amount`, `charged_currency`). */
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

/**
 * Gives back what an order charged its account, inside the caller's transaction (ledger entry `esim_refund`, event
 * `account.credited`): the amount and currency it was charged, whatever the rate now. A blocked account takes it too.
 */
export async function refundAccount(
  trx: Db,
  scope: EventScope,
  refund: Charge,
  now: Date,
): Promise<void> {
  const account = await applySettledMovement(
    trx,
    {
      accountId: refund.accountId,
      type: 'esim_refund',
      amount: refund.price,
      currency: refund.currency,
      sourceId: refund.orderId,
      reference: refund.reference,
      description: refund.description,
      requireOpen: false,
    },
    now,
  )
  await emit(trx, scope, 'account.credited', presentAccount(account), now)
}
