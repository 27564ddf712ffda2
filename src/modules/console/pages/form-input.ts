import type { Html } from '../../../lib/html.js'
import { field, minorUnits } from '../components.js'
import type { PageContext } from '../router.js'
import { invalidField } from './refusals.js'

/**
 * What the object pages read from a request: path and query parameters, list pages and filters, and form values
 * turned into what the API takes (amounts in minor units, whole numbers, currency codes).
 */

/** One query parameter as text ('' when absent). */
export function queryText(ctx: PageContext, name: string): string {
  const value = (ctx.req.query as Record<string, unknown>)[name]
  return typeof value === 'string' ? value.slice(0, 512) : ''
}

/** One path parameter. */
export function pathParam(ctx: PageContext, name: string): string {
  return (ctx.req.params as Record<string, string>)[name] ?? ''
}

/** The page parameters of a console list: 25 a page, `?after=` the API's next_cursor of the previous page. */
export function pageOf(ctx: PageContext): { limit: number; starting_after?: string } {
  const after = queryText(ctx, 'after')
  return after ? { limit: 25, starting_after: after } : { limit: 25 }
}

/** A filter of a list: the query value when it is one of `allowed` (or any id-like text when `allowed` is 'id'). */
export function filterValue(
  ctx: PageContext,
  name: string,
  allowed: readonly string[] | 'id',
): string {
  const raw = (ctx.req.query as Record<string, unknown>)[name]
  const value = typeof raw === 'string' ? raw.trim().slice(0, 128) : ''
  if (allowed === 'id') return /^[a-z]+_[0-9A-Za-z]+$/.test(value) ? value : ''
  return allowed.includes(value) ? value : ''
}

/** A form's optional text field: undefined when empty (so the body leaves it out, as an API caller would). */
export function optional(ctx: PageContext, name: string): string | undefined {
  const value = ctx.text(name).trim()
  return value === '' ? undefined : value
}

/**
 * An amount typed in the currency's units ("12.50" for USD, "1250" for JPY) as minor units: null when empty, NaN
 * when it is not a number of at most `integerDigits` digits and the currency's decimals.
 */
function typedAmount(text: string, currency: string, integerDigits: number): number | null {
  const value = text.trim().replace(/,/g, '')
  if (value === '') return null
  const digits = minorUnits(currency)
  const match = new RegExp(`^(\\d{1,${integerDigits}})(?:\\.(\\d+))?$`).exec(value)
  if (!match || (match[2] ?? '').length > digits) return Number.NaN
  return Number(match[1]) * 10 ** digits + Number((match[2] ?? '').padEnd(digits, '0') || '0')
}

/**
 * An amount typed in the currency's units ("12.50" for USD, "1250" for JPY) as minor units; null when empty. Anything
 * else is the invalid_parameter /v1 answers for a malformed amount.
 */
export function amountInput(text: string, currency: string, param = 'amount'): number | null {
  const amount = typedAmount(text, currency, 13)
  if (Number.isNaN(amount)) {
    const digits = minorUnits(currency)
    throw invalidField(
      param,
      digits === 0
        ? `Write the amount in whole ${currency} (no decimals), like 1250.`
        : `Write the amount in ${currency} with at most ${digits} decimals, like 12.${'5'.padEnd(digits, '0')}.`,
    )
  }
  return amount
}

/** A positive amount typed in the currency's units as minor units; NaN for anything else (the caller refuses it). */
export function minorAmount(text: string, currency: string): number {
  const amount = typedAmount(text, currency, 12)
  return amount !== null && amount > 0 ? amount : Number.NaN
}

/** A form's whole-number field ('' → undefined; anything else not a whole number → NaN, which the caller refuses). */
export function wholeNumber(value: string): number | undefined {
  const v = value.trim().replace(/[,_\s]/g, '')
  if (v === '') return undefined
  return /^\d{1,15}$/.test(v) ? Number(v) : Number.NaN
}

/** A three-letter currency code Intl knows (upper-cased), or null. */
export function currencyCode(text: string): string | null {
  const code = text.trim().toUpperCase()
  if (!/^[A-Z]{3}$/.test(code)) return null
  try {
    minorUnits(code)
    return code
  } catch {
    return null
  }
}

/** An amount field in the currency's units ("12.50 USD"); `id` keeps two such fields of one page apart. */
export function moneyField(
  name: string,
  id: string,
  label: string,
  currency: string,
  options: { value?: string; required?: boolean; hint?: string } = {},
): Html {
  const digits = minorUnits(currency)
  const example =
    digits === 0
      ? `Whole ${currency}, like 1250.`
      : `In ${currency}, like 12.${'5'.padEnd(digits, '0')}.`
  return field({
    name,
    id,
    label: `${label} (${currency})`,
    value: options.value,
    required: options.required,
    inputmode: digits === 0 ? 'numeric' : 'decimal',
    hint: options.hint ?? example,
  })
}
