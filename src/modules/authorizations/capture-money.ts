import type { AppDeps } from '../../app-deps.js'
import { scopeOfRow } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import type { QuotedRate } from '../../http/fx-details.js'
import {
  convertedAt,
  namedCurrency,
  programPricing,
  proportion,
  quoteNow,
  sameCurrency,
  shareOfAuthorization,
  wrongCurrency,
  type FxPricing,
  type TransactionMoney,
} from '../transactions/index.js'
import { inAccountCurrency } from './engine.js'
import type * as repo from './repo.js'

/**
 * What a capture clears, in the account's currency and the merchant's (docs/fx.md, "Captures"): its currency checked,
 * a foreign authorization's pricing (and rate, when re-rated) read before the capture's transaction, and the money
 * worked out under the account's lock from what the authorization still holds.
 */

/** What a capture names: `amount` (optional) in `currency` (optional: the account's). */
export interface CaptureAsk {
  amount?: number
  currency?: string
}

/** How a capture of a foreign authorization is priced: the program's pricing, and a fresh rate when re-rated. */
export interface CaptureRate {
  pricing: FxPricing
  /** The rate now, when the capture is named in the merchant's currency; null when in the account's. */
  quote: QuotedRate | null
}

/**
 * The currency a capture names, checked, and for a foreign authorization its pricing (and, named in the merchant's
 * currency, the rate now): read before the capture's transaction, since a simulated processor reads its pins through
 * the platform's handle. Null for an authorization in its account's currency: nothing more is read.
 */
export async function captureRate(
  deps: AppDeps,
  auth: repo.AuthorizationRow,
  named: string | undefined,
): Promise<CaptureRate | null> {
  const currency = namedCurrency(named)
  const foreign = auth.fx !== null
  if (
    currency !== undefined &&
    currency !== auth.currency &&
    !(foreign && currency === auth.merchant_currency)
  ) {
    throw wrongCurrency(
      foreign
        ? `Authorization ${auth.id} is captured in ${auth.merchant_currency} (the merchant's currency, re-rated) or ${auth.currency} (the account's).`
        : `Authorization ${auth.id} is in ${auth.currency}; a capture is in the same currency.`,
    )
  }
  if (!foreign) return null
  const { program, pricing } = await programPricing(deps, auth.program_id)
  const quote =
    currency === auth.merchant_currency
      ? await quoteNow(deps, program, scopeOfRow(auth), auth.merchant_currency, auth.currency)
      : null
  return { pricing, quote }
}

/**
 * The account-currency amount that stands for all of a foreign authorization's `merchant_amount`: its `amount`,
 * unless the integrator approved part of the request (then `merchant_amount` is still the whole request, and the
 * recorded conversion of it is the measure).
 */
function wholeOf(auth: repo.AuthorizationRow): number {
  const amount = Number(auth.amount)
  let asked: number
  try {
    asked = inAccountCurrency(auth, Number(auth.merchant_amount)).amount
  } catch {
    return amount // the whole request converts beyond the limit: only what was approved can be measured
  }
  // Each request rounded on its own: up to one minor unit each apart from the whole converted at once.
  return amount + auth.request_history.length < asked ? asked : amount
}

function nothingHeld(auth: repo.AuthorizationRow): ApiError {
  return new ApiError('missing_parameter', {
    param: 'amount',
    message: `Authorization ${auth.id} holds nothing any more; name the amount to capture.`,
  })
}

/**
 * What a capture clears (docs/fx.md, "Captures"). In the account's currency (or on an authorization in it): `amount`
 * as it is, default what is held; on a foreign authorization it stands for its share of the merchant's amount at the
 * authorization's rate. In the merchant's currency: `amount` (default what is held, back in the merchant's currency)
 * converted at the rate now with the program's markup.
 */
export function captureMoney(
  auth: repo.AuthorizationRow,
  held: number,
  amount: number | undefined,
  rate: CaptureRate | null,
): TransactionMoney {
  if (rate?.quote) {
    const whole = wholeOf(auth)
    const asked = amount ?? proportion(Number(auth.merchant_amount), held, whole)
    if (asked <= 0) throw nothingHeld(auth)
    return convertedAt(rate.quote, asked, auth.merchant_currency, auth.currency, rate.pricing)
  }
  const take = amount ?? held
  if (take <= 0) throw nothingHeld(auth)
  if (!rate || auth.fx === null) return sameCurrency(take, auth.currency)
  return shareOfAuthorization(
    {
      whole: wholeOf(auth),
      merchantAmount: Number(auth.merchant_amount),
      merchantCurrency: auth.merchant_currency,
      fx: { ...auth.fx, fee_amount: Number(auth.fx.fee_amount) },
    },
    take,
    rate.pricing.fee,
  )
}
