/**
 * Amounts in minor units shown to people (the console's pages, the H5 pages, the CLI's lines): `formatMoney(1250, 'USD')`
 * is `$12.50`, `formatMoney(1250, 'JPY')` `¥1,250`, `formatMoney(1250, 'KWD')` `KWD 1.250`; `decimalAmount` the bare
 * number (`12.50`, `1250`, `1.250`).
 *
 * Building an `Intl.NumberFormat` costs some 25 µs, formatting with one under 1 µs: a console page of 25
 * authorizations built 50 of them (most of its CPU). So each currency's formatter is built once and kept: a memo of
 * a pure computation, not state. Currencies are three-letter codes, so the memo is small; past `MAX_FORMATTERS` codes
 * (only an odd caller could get there) formatters are built per call as before.
 */
const MAX_FORMATTERS = 256
const formatters = new Map<string, { digits: number; format: Intl.NumberFormat }>()

/** A currency's formatter and minor units; an unknown code throws Intl's RangeError, as building one always did. */
function formatterFor(currency: string): { digits: number; format: Intl.NumberFormat } {
  const kept = formatters.get(currency)
  if (kept) return kept
  const digits = new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  const made = { digits, format: new Intl.NumberFormat('en-US', { style: 'currency', currency, minimumFractionDigits: digits, maximumFractionDigits: digits }) }
  if (formatters.size < MAX_FORMATTERS) formatters.set(currency, made)
  return made
}

/** The minor units of a currency (2 for USD, 0 for JPY, 3 for KWD), as Intl knows them. */
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
