import { CURRENCY_MINOR_UNITS, knownCurrency } from './currencies.js'

/**
 * Amounts in minor units shown to people (the console's pages, the H5 pages, the CLI's lines): `formatMoney(1250, 'USD')`
 * is `$12.50`, `formatMoney(1250, 'JPY')` `¥1,250`, `formatMoney(1250, 'KWD')` `KWD 1.250`; `decimalAmount` the bare
 * number (`12.50`, `1250`, `1.250`).
 *
 * Building an `Intl.NumberFormat` costs some 25 µs, formatting with one under 1 µs: a console page of 25
 * authorizations built 50 of them (most of its CPU). So each currency's formatter is built once and kept: a memo of
 * a pure computation, not state. Currencies are three-letter codes, so the memo is small; past `MAX_FORMATTERS` codes
 * (only an odd caller could get there) formatters are built per call as before.
 *
 * The minor units are ISO 4217's, from the service's table (`currencies.ts`): Intl's own differ for a dozen codes
 * (HUF, IDR, COP… 0 instead of 2, IQD 0 instead of 3), and an amount is always in the table's minor units. A code
 * the table does not know keeps Intl's.
 */
const MAX_FORMATTERS = 256
const formatters = new Map<string, { digits: number; format: Intl.NumberFormat }>()

/** A currency's formatter and minor units; a code Intl does not take throws its RangeError, as building one always did. */
function formatterFor(currency: string): { digits: number; format: Intl.NumberFormat } {
  const kept = formatters.get(currency)
  if (kept) return kept
  const intl = new Intl.NumberFormat('en-US', { style: 'currency', currency })
  const code = currency.toUpperCase()
  const digits = knownCurrency(code)
    ? CURRENCY_MINOR_UNITS[code]
    : (intl.resolvedOptions().maximumFractionDigits ?? 2)
  const made = {
    digits,
    format: new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency,
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }),
  }
  if (formatters.size < MAX_FORMATTERS) formatters.set(currency, made)
  return made
}

/** The minor units of a currency (2 for USD, 0 for JPY, 3 for KWD): the table's (ISO 4217), or Intl's for a code it lacks. */
export function minorUnits(currency: string): number {
  return formatterFor(currency).digits
}

/** An amount in minor units shown in its currency, with its symbol and exactly its minor units' decimals. */
export function formatMoney(minor: number, currency: string): string {
  const { digits, format } = formatterFor(currency)
  return format.format(minor / 10 ** digits)
}

/** An amount in minor units as a plain decimal in its currency's units, no symbol or grouping: `decimalAmount(1250, 'USD')` is `12.50`. */
export function decimalAmount(minor: number, currency: string): string {
  const { digits } = formatterFor(currency)
  return (minor / 10 ** digits).toFixed(digits)
}
