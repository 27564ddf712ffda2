import type { AppDeps } from '../../app-deps.js'
import { json } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { convertAtQuote, type FxDetailsValue, type QuotedRate } from '../../http/fx-details.js'
import { fxRefusal } from '../../http/fx-errors.js'
import { knownCurrency } from '../../lib/currencies.js'
import { FX_MAX_AMOUNT, FxAmountError, FxCurrencyError } from '../../lib/fx.js'
import { findProgram, type ProgramRow } from '../programs/index.js'

/**
 * The money of a capture or a refund in another currency than its account's (docs/fx.md, "Transactions"): converted
 * at the rate of its own time with the program's markup, and split as the program's `fx_fee` says. Every quote is
 * asked before the caller's transaction (a simulated processor reads its pins through the platform's handle).
 */

/** What one capture or refund records and moves on the ledger. */
export interface TransactionMoney {
  /** The transaction's `amount`, in the account's currency: markup included, or without it when the fee is separate. */
  amount: number
  /** The `fx_fee` ledger entry's size: the markup when the program's `fx_fee` is `separate`, else 0. */
  fee: number
  merchantAmount: number
  merchantCurrency: string
  fx: FxDetailsValue | null
}

/** How a program prices the money that moves: its markup now, and where the markup goes. */
export interface FxPricing {
  markupBps: number
  fee: 'included' | 'separate'
}

/** A transaction in its account's currency: nothing converted, no fee. */
export function sameCurrency(amount: number, currency: string): TransactionMoney {
  return { amount, fee: 0, merchantAmount: amount, merchantCurrency: currency, fx: null }
}

/** A currency named in a request, upper-cased; one the service does not know is 400 naming `currency`. */
export function namedCurrency(code: string | undefined): string | undefined {
  if (code === undefined) return undefined
  const upper = code.toUpperCase()
  if (!knownCurrency(upper)) return fxRefusal(new FxCurrencyError(code))
  return upper
}

/** A currency named that the transaction cannot be in: 400 naming `currency`. */
export function wrongCurrency(message: string): ApiError {
  return new ApiError('invalid_parameter', { param: 'currency', message })
}

/** The program of a foreign capture or refund, read before the transaction, with its pricing. */
export async function programPricing(
  deps: AppDeps,
  programId: string,
): Promise<{ program: ProgramRow; pricing: FxPricing }> {
  const program = await findProgram(deps.db, programId)
  if (!program) {
    throw new ApiError('program_not_provisioned', {
      message: `Program ${programId} is not attached in this environment.`,
    })
  }
  return { program, pricing: { markupBps: program.fx_markup_bps, fee: program.fx_fee } }
}

/** The rate `base → quote` now, as the program's processor gives it (the sandbox: the pinned rate, else the table). */
export async function quoteNow(
  deps: AppDeps,
  program: ProgramRow,
  scope: Scope,
  base: string,
  quote: string,
): Promise<QuotedRate> {
  const rate = await deps.processors
    .forProgram(program)
    .fxRate(scope, base, quote, deps.clock.now())
  return { rate: rate.rate, source: rate.source, rateAt: rate.rateAt }
}

/** Splits a converted amount as the program says: under `separate` the markup leaves `amount` for its own entry. */
function priced(
  total: number,
  merchantAmount: number,
  merchantCurrency: string,
  fx: FxDetailsValue,
  fee: FxPricing['fee'],
): TransactionMoney {
  const separate = fee === 'separate' ? fx.fee_amount : 0
  if (total - separate <= 0) {
    return fxRefusal(
      new FxAmountError('out_of_range', 'amount converts to 0 in the account currency: too small.'),
    )
  }
  return { amount: total - separate, fee: separate, merchantAmount, merchantCurrency, fx }
}

/**
 * `merchantAmount` of `from` converted into `to` at `quote` with the program's markup (`convertAtQuote`). A result
 * beyond 10^12 minor units, or one that comes to 0, is 400 naming `amount`: refused, never wrapped.
 */
export function convertedAt(
  quote: QuotedRate,
  merchantAmount: number,
  from: string,
  to: string,
  pricing: FxPricing,
): TransactionMoney {
  try {
    const out = convertAtQuote(quote, {
      amount: merchantAmount,
      from,
      to,
      markupBps: pricing.markupBps,
    })
    return priced(out.amount, merchantAmount, from, out.fx, pricing.fee)
  } catch (err) {
    return fxRefusal(err)
  }
}

/** `value × part / whole` rounded half away from zero (all non-negative integers; exact on BigInt). */
export function proportion(value: number, part: number, whole: number): number {
  if (whole <= 0) return 0
  const num = BigInt(value) * BigInt(part)
  const den = BigInt(whole)
  const q = num / den
  return Number((num % den) * 2n >= den ? q + 1n : q)
}

/**
 * A capture named in the account's currency on a foreign authorization: `amount` is taken as it is (no new rate),
 * and stands for the same share of the merchant's amount and of the markup as the authorization's `whole` (the
 * account-currency amount that stands for all of its `merchantAmount`): `merchant_amount = round(merchantAmount ×
 * amount / whole)`, the fee likewise, and `fx` keeps the authorization's rate, markup, source and time.
 */
export function shareOfAuthorization(
  auth: { whole: number; merchantAmount: number; merchantCurrency: string; fx: FxDetailsValue },
  amount: number,
  fee: FxPricing['fee'],
): TransactionMoney {
  const feeAmount = proportion(auth.fx.fee_amount, amount, auth.whole)
  const merchantAmount = Math.max(1, proportion(auth.merchantAmount, amount, auth.whole))
  if (merchantAmount > FX_MAX_AMOUNT) {
    return fxRefusal(
      new FxAmountError(
        'overflow',
        `amount stands for more than ${FX_MAX_AMOUNT} minor units of ${auth.merchantCurrency}.`,
      ),
    )
  }
  return priced(
    amount,
    merchantAmount,
    auth.merchantCurrency,
    { ...auth.fx, fee_amount: Math.min(feeAmount, amount) },
    fee,
  )
}

/** The columns of a transaction's money (docs/fx.md, "Transactions"). */
export function moneyColumns(money: TransactionMoney) {
  return {
    amount: money.amount,
    merchant_amount: money.merchantAmount,
    merchant_refunded_amount: 0,
    merchant_currency: money.merchantCurrency,
    fx: money.fx === null ? null : json(money.fx),
  }
}
