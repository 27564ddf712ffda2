import { knownCurrency, minorUnitsOf } from './currencies.js'

/**
 * Foreign exchange in exact decimal arithmetic: rates are decimal strings, amounts integers in minor units, and every
 * step runs on BigInt, so no binary float ever touches money.
 *
 * A rate is quote-per-base: how many units (major, not minor) of the quote currency one unit of the base currency
 * buys. For an authorization the base is the merchant's currency and the quote the account's, so
 * `EUR → USD at "1.0825"` turns 10.00 EUR into 10.83 USD.
 *
 * **Rates.** A rate is written as a plain positive decimal (`"1.0825"`, `"151.5"`, `"0.000006612"`): digits, at most
 * one decimal point with digits on both sides, no sign, no exponent, no spaces. It has at most
 * `RATE_MAX_SIGNIFICANT_DIGITS` (12) significant digits (from its first non-zero digit to its last digit, zeros
 * trailing after the decimal point aside) and at most `RATE_MAX_DECIMALS` (18) decimal places, so it lies between
 * 10^-18 and 10^12 and two rates differ in the twelfth digit at the finest. Zero, a negative number, anything longer
 * than `RATE_MAX_LENGTH` characters, or anything else is refused (`FxRateError`, param `rate`). The canonical form
 * (`formatRate`) drops leading zeros of the integer part and trailing zeros of the fraction: `"0150.50"` is `"150.5"`.
 *
 * **Conversion.** `convert` answers, in the target currency's minor units,
 *
 *     amount     = round(amount_from × rate × (1 + markup_bps / 10 000))   (from's minor units → to's minor units)
 *     fee_amount = amount − round(amount_from × rate)
 *
 * each computed exactly as one fraction and rounded once, half away from zero. So `amount` is exactly the spec's
 * formula, `amount = round(without markup) + fee_amount` holds exactly, `fee_amount` is 0 without a markup and never
 * negative for a positive amount (rounding is monotonic). A negative amount (a refund) converts symmetrically:
 * `convert(-x) = -convert(x)`, fee included. The two currencies' minor units enter the fraction as powers of ten
 * (`1 JPY → BHD` divides by 10^0 and multiplies by 10^3). A converted amount of 0 is a valid answer (1 IDR in KWD):
 * the caller decides what to do with it.
 *
 * **Limits.** An amount must be a safe integer whose magnitude is at most the limit (`FX_MAX_AMOUNT`, 10^12 minor
 * units unless the caller gives a smaller or larger `maxAmount`, never above Number.MAX_SAFE_INTEGER): the largest
 * single amount the service takes for an authorization, a capture or a ledger adjustment (transactions' `MAX_AMOUNT`,
 * the ledger's `MAX_ADJUSTMENT`). A conversion whose result would exceed it is refused with `FxAmountError`
 * (param `amount`), never wrapped or clamped.
 */

export const RATE_MAX_SIGNIFICANT_DIGITS = 12
export const RATE_MAX_DECIMALS = 18
/** Longer rate text is refused before it is read (a rate needs at most 20 characters: "0." and 18 decimals). */
export const RATE_MAX_LENGTH = 40
/** The largest converted amount, in minor units: the largest single amount the service takes (10^12). */
export const FX_MAX_AMOUNT = 1_000_000_000_000
/** The largest markup a program may set: 1 000 basis points, 10 %. */
export const FX_MAX_MARKUP_BPS = 1000

/** An FX input the caller must refuse: `param` names the request parameter it maps to (400 invalid_parameter). */
export class FxError extends Error {
  constructor(
    readonly param: string,
    message: string,
  ) {
    super(message)
    this.name = 'FxError'
  }
}

/** A rate that is not a positive decimal string within the limits above. */
export class FxRateError extends FxError {
  constructor(message: string) {
    super('rate', message)
    this.name = 'FxRateError'
  }
}

/** An amount that is not a safe integer, is beyond the limit, or whose conversion would be. */
export class FxAmountError extends FxError {
  constructor(
    readonly reason: 'not_integer' | 'out_of_range' | 'overflow',
    message: string,
  ) {
    super('amount', message)
    this.name = 'FxAmountError'
  }
}

/** A currency the service does not know (`src/lib/currencies.ts`). */
export class FxCurrencyError extends FxError {
  constructor(
    readonly code: string,
    param = 'currency',
  ) {
    super(param, `${JSON.stringify(code)} is not an ISO 4217 currency the service knows.`)
    this.name = 'FxCurrencyError'
  }
}

/** A markup outside 0–1000 basis points or not an integer. */
export class FxMarkupError extends FxError {
  constructor(message: string) {
    super('fx_markup_bps', message)
    this.name = 'FxMarkupError'
  }
}

export function isFxError(err: unknown): err is FxError {
  return err instanceof FxError
}

/** A rate read exactly: its value is `units / 10^scale`, with `units > 0` and no trailing zero when `scale > 0`. */
export interface Rate {
  readonly units: bigint
  readonly scale: number
}

const RATE_TEXT = /^(\d+)(?:\.(\d+))?$/

/**
 * Rates already parsed, by their text: a decision converts at one of a few rates (a table's, a pin's), and parsing
 * one again (a regular expression, BigInt) was most of what a conversion cost. A `Rate` is never changed after it is
 * made, so one is shared. Bounded: past `PARSED_RATES_MAX` texts it starts again.
 */
const parsedRates = new Map<string, Rate>()
const PARSED_RATES_MAX = 4096

/** Reads a rate written as a decimal string (rules above); anything else throws `FxRateError`. */
export function parseRate(text: unknown): Rate {
  if (typeof text === 'string') {
    const known = parsedRates.get(text)
    if (known) return known
  }
  const rate = parseRateText(text)
  if (parsedRates.size >= PARSED_RATES_MAX) parsedRates.clear()
  parsedRates.set(text as string, Object.freeze(rate))
  return rate
}

function parseRateText(text: unknown): Rate {
  if (typeof text !== 'string')
    throw new FxRateError('rate must be a decimal string such as "1.0825".')
  if (text.length > RATE_MAX_LENGTH)
    throw new FxRateError(`rate must be at most ${RATE_MAX_LENGTH} characters.`)
  const match = RATE_TEXT.exec(text)
  if (!match)
    throw new FxRateError(
      'rate must be a positive decimal string such as "1.0825" (digits and one decimal point, no sign or exponent).',
    )
  const fraction = (match[2] ?? '').replace(/0+$/, '')
  if (fraction.length > RATE_MAX_DECIMALS)
    throw new FxRateError(`rate has at most ${RATE_MAX_DECIMALS} decimal places.`)
  const digits = `${match[1]}${fraction}`.replace(/^0+/, '')
  if (digits === '') throw new FxRateError('rate must be greater than zero.')
  // From the first non-zero digit to the last one written (trailing zeros of the fraction are already gone).
  if (digits.length > RATE_MAX_SIGNIFICANT_DIGITS) {
    throw new FxRateError(`rate has at most ${RATE_MAX_SIGNIFICANT_DIGITS} significant digits.`)
  }
  return { units: BigInt(digits), scale: fraction.length }
}

/** A rate in its canonical text: no leading zero before the integer digits, no trailing zero after the decimals. */
export function formatRate(rate: Rate): string {
  const text = rate.units.toString()
  if (rate.scale === 0) return text
  const padded = text.padStart(rate.scale + 1, '0')
  return `${padded.slice(0, -rate.scale)}.${padded.slice(-rate.scale)}`
}

/** The canonical text of a rate given as text (`"0150.50"` → `"150.5"`); invalid text throws `FxRateError`. */
export function normalizeRate(text: string): string {
  return formatRate(parseRate(text))
}

const TEN = 10n

/** 10^0 to 10^64 made once: a conversion takes two or three of them. */
const POWERS_OF_TEN = Array.from({ length: 65 }, (_, n) => TEN ** BigInt(n))

function pow10(n: number): bigint {
  return POWERS_OF_TEN[n] ?? TEN ** BigInt(n)
}

/** `num / den` rounded half away from zero, for `num >= 0` and `den > 0`. */
function divideHalfUp(num: bigint, den: bigint): bigint {
  const q = num / den
  return (num % den) * 2n >= den ? q + 1n : q
}

function digitCount(n: bigint): number {
  return n === 0n ? 0 : n.toString().length
}

/**
 * `num / den` (both positive) as a rate of at most `RATE_MAX_SIGNIFICANT_DIGITS` significant digits and
 * `RATE_MAX_DECIMALS` decimals, rounded half up: how cross rates are made. A quotient below 10^-18 throws.
 */
export function divideToRate(num: bigint, den: bigint): Rate {
  if (num <= 0n || den <= 0n) throw new FxRateError('rate must be greater than zero.')
  // num/den lies in [10^(dn-dd-1), 10^(dn-dd+1)): at this scale the truncated quotient has 12 or 13 digits.
  let scale = RATE_MAX_SIGNIFICANT_DIGITS - (digitCount(num) - digitCount(den))
  const quotient = (s: number, divide: (n: bigint, d: bigint) => bigint) =>
    s >= 0 ? divide(num * pow10(s), den) : divide(num, den * pow10(-s))
  if (digitCount(quotient(scale, (n, d) => n / d)) > RATE_MAX_SIGNIFICANT_DIGITS) scale -= 1
  scale = Math.min(scale, RATE_MAX_DECIMALS)
  let units = quotient(scale, divideHalfUp)
  if (units === 0n) throw new FxRateError(`rate must be at least 10^-${RATE_MAX_DECIMALS}.`)
  if (scale < 0) {
    units *= pow10(-scale)
    scale = 0
  }
  while (scale > 0 && units % TEN === 0n) {
    units /= TEN
    scale -= 1
  }
  // More than twelve digits left only for a quotient of 10^12 or more (integer digits all count).
  if (digitCount(units) > RATE_MAX_SIGNIFICANT_DIGITS) {
    throw new FxRateError(`rate must be below 10^${RATE_MAX_SIGNIFICANT_DIGITS}.`)
  }
  return { units, scale }
}

/** The rate `base → quote` from two rates against one reference currency (units of each per 1 USD): quote / base. */
export function crossRate(
  basePerReference: string | Rate,
  quotePerReference: string | Rate,
): string {
  const base = typeof basePerReference === 'string' ? parseRate(basePerReference) : basePerReference
  const quote =
    typeof quotePerReference === 'string' ? parseRate(quotePerReference) : quotePerReference
  // (q.units / 10^q.scale) / (b.units / 10^b.scale) = q.units × 10^b.scale / (b.units × 10^q.scale)
  return formatRate(divideToRate(quote.units * pow10(base.scale), base.units * pow10(quote.scale)))
}

export interface ConvertInput {
  /** Integer minor units of `from` (negative for a refund). */
  amount: number
  /** The currency of `amount` (the rate's base): an upper-case ISO 4217 code the service knows. */
  from: string
  /** The currency to convert into (the rate's quote). */
  to: string
  /** Quote-per-base, as a decimal string or an already parsed rate. */
  rate: string | Rate
  /** The markup in basis points, an integer 0–1000 (default 0). */
  markupBps?: number
  /** The largest magnitude allowed in and out (default `FX_MAX_AMOUNT`; at most Number.MAX_SAFE_INTEGER). */
  maxAmount?: number
}

export interface Conversion {
  /** Minor units of `to`, markup included. */
  amount: number
  /** The markup's part of `amount`: `amount` minus the conversion without markup (0 without markup). */
  feeAmount: number
}

/** Converts an amount at a rate with a markup (the rules at the top of this file). Refuses with a typed `FxError`. */
export function convert(input: ConvertInput): Conversion {
  if (!knownCurrency(input.from)) throw new FxCurrencyError(input.from)
  if (!knownCurrency(input.to)) throw new FxCurrencyError(input.to)
  const rate = typeof input.rate === 'string' ? parseRate(input.rate) : checkedRate(input.rate)
  const markup = input.markupBps ?? 0
  if (!Number.isInteger(markup) || markup < 0 || markup > FX_MAX_MARKUP_BPS) {
    throw new FxMarkupError(`fx_markup_bps must be an integer from 0 to ${FX_MAX_MARKUP_BPS}.`)
  }
  const limit = Math.min(input.maxAmount ?? FX_MAX_AMOUNT, Number.MAX_SAFE_INTEGER)
  if (!Number.isSafeInteger(input.amount))
    throw new FxAmountError('not_integer', 'amount must be an integer number of minor units.')
  if (Math.abs(input.amount) > limit)
    throw new FxAmountError('out_of_range', `amount must be at most ${limit} minor units.`)
  const sign = input.amount < 0 ? -1n : 1n
  const magnitude = BigInt(Math.abs(input.amount))
  // amount / 10^from × rate × 10^to, with rate = units / 10^scale.
  const num = magnitude * rate.units * pow10(minorUnitsOf(input.to))
  const den = pow10(minorUnitsOf(input.from) + rate.scale)
  const plain = divideHalfUp(num, den)
  const total = divideHalfUp(num * BigInt(10_000 + markup), den * 10_000n)
  if (total > BigInt(limit)) {
    throw new FxAmountError(
      'overflow',
      `The converted amount exceeds ${limit} minor units of ${input.to}.`,
    )
  }
  return { amount: Number(sign * total), feeAmount: Number(sign * (total - plain)) }
}

/** A `Rate` built elsewhere, checked as `parseRate` would have (positive, within the limits). */
function checkedRate(rate: Rate): Rate {
  if (
    typeof rate.units !== 'bigint' ||
    rate.units <= 0n ||
    !Number.isInteger(rate.scale) ||
    rate.scale < 0
  ) {
    throw new FxRateError('rate must be greater than zero.')
  }
  return parseRate(formatRate(rate))
}
