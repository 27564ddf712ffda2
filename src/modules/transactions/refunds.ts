import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { json } from '../../db/types.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import type { QuotedRate } from '../../http/fx-details.js'
import { newId } from '../../lib/ids.js'
import { requireAccount, type AccountRow } from '../accounts/index.js'
import { requireCardOnClock } from '../cards/index.js'
import { emit } from '../events/index.js'
import { applySettledMovement, lockAccountRow } from '../ledger/index.js'
import {
  convertedAt,
  moneyColumns,
  namedCurrency,
  programPricing,
  quoteNow,
  sameCurrency,
  wrongCurrency,
  type FxPricing,
} from './fx.js'
import { DISPUTED_TOTAL } from './hooks.js'
import { presentTransaction } from './present.js'
import * as repo from './repo.js'
import type { RefundBody, SimulateRefundBody, TransactionView } from './schemas.js'
import { requireTransactionOnClock } from './service.js'
import type { MerchantValue } from './types.js'

/**
 * Refunds: of a settled capture (the integrator's `POST /v1/transactions/{id}/refund`) and merchant-initiated (the
 * sandbox's `/v1/simulate/refunds`). In another currency than the account's, each converts at the rate of its own
 * time with the program's markup (docs/fx.md, "Refunds"); a refund of a capture is judged in its merchant currency.
 */

/** A refund's pricing and its rate now, for a capture in another currency than its account's (else null). */
async function refundRate(
  deps: AppDeps,
  txn: repo.TransactionRow,
): Promise<{ quote: QuotedRate; pricing: FxPricing } | null> {
  if (txn.merchant_currency === txn.currency) return null
  const { program, pricing } = await programPricing(deps, txn.program_id)
  const quote = await quoteNow(deps, program, scopeOfRow(txn), txn.merchant_currency, txn.currency)
  return { quote, pricing }
}

/**
 * What disputes claim of a capture (in the account's currency) as a share of its merchant amount, rounded up so a
 * refund and a dispute never both take the same minor unit; the claim itself for a capture in its account's currency.
 */
function disputedShare(txn: repo.TransactionRow, disputed: number): number {
  if (disputed <= 0 || txn.merchant_currency === txn.currency) return disputed
  const num = BigInt(disputed) * BigInt(txn.merchant_amount)
  const den = BigInt(txn.amount)
  return Number((num + den - 1n) / den)
}

/**
 * Refunds (part of) a settled capture: the account is credited (ledger `refund`), a settled `refund`
 * transaction is created, and the capture becomes `refunded` once nothing is left. Refunds of one
 * capture run one at a time under the account's row lock, so together they never exceed it. `amount` is in the
 * capture's merchant currency and judged there: a capture in another currency than its account's converts each
 * refund at the rate of its own time with the program's markup (docs/fx.md, "Refunds"), so refunding all of it may
 * credit more or less than it debited.
 */
export async function refundTransaction(
  deps: AppDeps,
  ctx: RequestCtx,
  transactionId: string,
  body: RefundBody,
): Promise<TransactionView> {
  const on = await requireTransactionOnClock(deps, ctx, transactionId)
  const current = on.txn
  const clockId = on.clockId
  const named = namedCurrency(body.currency)
  if (named !== undefined && named !== current.merchant_currency) {
    throw wrongCurrency(
      `Refunds of transaction ${current.id} are in ${current.merchant_currency}, the currency the merchant charged.`,
    )
  }
  const rate = await refundRate(deps, current)
  const now = on.deps.clock.now()
  return withTx(deps.db, async (trx) => {
    await lockAccountRow(trx, current.account_id)
    const original = (await repo.lockTransaction(trx, current.id))!
    if (original.type !== 'capture' || original.status !== 'settled') {
      const why =
        original.type !== 'capture'
          ? 'it is itself a refund'
          : original.status === 'refunded'
            ? 'it is already fully refunded'
            : 'it is not settled yet'
      throw new ApiError('transaction_not_refundable', {
        message: `Transaction ${original.id} cannot be refunded: ${why}.`,
      })
    }
    // Money a dispute won back or still claims is not refundable a second time.
    const remaining =
      Number(original.merchant_amount) -
      Number(original.merchant_refunded_amount) -
      disputedShare(original, await deps.hooks.get(DISPUTED_TOTAL)(trx, original.id))
    if (remaining <= 0) {
      throw new ApiError('transaction_not_refundable', {
        message: `Nothing of transaction ${original.id} is left to refund: it is refunded or under dispute.`,
      })
    }
    const asked = body.amount ?? remaining
    if (asked > remaining) {
      throw new ApiError('refund_exceeds_original', {
        param: 'amount',
        message: rate
          ? `At most ${remaining} ${original.merchant_currency} of transaction ${original.id} is left to refund (in the merchant's currency).`
          : `At most ${remaining} of transaction ${original.id} is left to refund.`,
      })
    }
    const money = rate
      ? convertedAt(rate.quote, asked, original.merchant_currency, original.currency, rate.pricing)
      : sameCurrency(asked, original.currency)
    const refundId = newId('txn')
    await applySettledMovement(
      trx,
      {
        accountId: original.account_id,
        type: 'refund',
        amount: money.amount,
        fee: money.fee,
        currency: original.currency,
        sourceId: refundId,
        requireOpen: false,
        description: body.reason ?? null,
      },
      now,
    )
    const refund = await repo.insertTransaction(trx, {
      id: refundId,
      organization_id: original.organization_id,
      environment: original.environment,
      program_id: original.program_id,
      type: 'refund',
      status: 'settled',
      refunded_amount: 0,
      currency: original.currency,
      ...moneyColumns(money),
      authorization_id: original.authorization_id,
      card_id: original.card_id,
      account_id: original.account_id,
      merchant: json(original.merchant),
      original_transaction_id: original.id,
      reason: body.reason ?? null,
      created_at: now,
      updated_at: now,
      settled_at: now,
    })
    const refunded = Number(original.merchant_refunded_amount) + asked
    const updated = await repo.updateTransaction(trx, original.id, {
      refunded_amount: Number(original.refunded_amount) + money.amount,
      merchant_refunded_amount: refunded,
      status: refunded === Number(original.merchant_amount) ? 'refunded' : 'settled',
      updated_at: now,
    })
    const view = presentTransaction(refund)
    await emit(trx, { ...scopeOfRow(refund), clockId }, 'transaction.created', view, now)
    await emit(
      trx,
      { ...scopeOfRow(updated), clockId },
      'transaction.updated',
      presentTransaction(updated),
      now,
    )
    return view
  })
}

/**
 * A merchant refund in another currency than the account's: refused `currency_mismatch` when the account's program
 * blocks foreign spend, else priced at the rate now (asked before the transaction). Null in the account's currency.
 */
async function merchantRefundRate(
  deps: AppDeps,
  card: { id: string },
  account: AccountRow,
  currency: string,
): Promise<{ quote: QuotedRate; pricing: FxPricing } | null> {
  if (account.currency === currency) return null
  const { program, pricing } = await programPricing(deps, account.program_id)
  if (program.foreign_spend !== 'allowed') {
    throw new ApiError('currency_mismatch', {
      param: 'currency',
      message: `Card ${card.id} spends from a ${account.currency} account, not ${currency}, and its program does not spend in other currencies.`,
    })
  }
  const quote = await quoteNow(deps, program, scopeOfRow(account), currency, account.currency)
  return { quote, pricing }
}

/**
 * Sandbox: a merchant sends money back to a card on its own initiative (no capture named). The card's
 * account is credited even when blocked, as a network credit would be. In another currency than the account's it is
 * converted at the rate now with the program's markup (`currency_mismatch` when the program blocks foreign spend).
 */
export async function merchantRefund(
  deps: AppDeps,
  ctx: RequestCtx,
  body: SimulateRefundBody,
): Promise<TransactionView> {
  const {
    card,
    deps: clocked,
    clockId,
  } = await requireCardOnClock(deps, ctx, body.card_id, 'card_id')
  if (card.status === 'pending') throw new ApiError('card_not_provisioned', { param: 'card_id' })
  const currency = body.currency.toUpperCase()
  const merchant: MerchantValue = {
    name: body.merchant.name,
    mcc: body.merchant.mcc ?? null,
    city: body.merchant.city ?? null,
    country: body.merchant.country?.toUpperCase() ?? null,
  }
  const account = await requireAccount(deps.db, ctx, card.account_id)
  if (currency !== account.currency) namedCurrency(currency)
  const rate = await merchantRefundRate(deps, card, account, currency)
  const money = rate
    ? convertedAt(rate.quote, body.amount, currency, account.currency, rate.pricing)
    : sameCurrency(body.amount, currency)
  const now = clocked.clock.now()
  return withTx(deps.db, async (trx) => {
    const id = newId('txn')
    await applySettledMovement(
      trx,
      {
        accountId: card.account_id,
        type: 'refund',
        amount: money.amount,
        fee: money.fee,
        currency: account.currency,
        sourceId: id,
        requireOpen: false,
      },
      now,
    )
    const row = await repo.insertTransaction(trx, {
      id,
      organization_id: card.organization_id,
      environment: card.environment,
      program_id: card.program_id,
      type: 'refund',
      status: 'settled',
      refunded_amount: 0,
      currency: account.currency,
      ...moneyColumns(money),
      authorization_id: null,
      card_id: card.id,
      account_id: card.account_id,
      merchant: json(merchant),
      original_transaction_id: null,
      reason: null,
      created_at: now,
      updated_at: now,
      settled_at: now,
    })
    const view = presentTransaction(row)
    await emit(trx, { ...scopeOfRow(row), clockId }, 'transaction.created', view, now)
    return view
  })
}
