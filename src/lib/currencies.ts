/**
 * The ISO 4217 currencies the service knows, with their minor units (the number of decimals an amount in minor
 * units carries): a static table, not `Intl`, so every Node build and every machine gives the same answer (Intl's
 * CLDR data differs from ISO 4217 for a dozen codes, IQD 0 instead of 3 among them, and changes with the ICU version).
 *
 * The list is ISO 4217's active currencies, without the fund codes (BOV, CHE, CHW, CLF, COU, MXV, USN, UYI, UYW),
 * the precious metals (XAG, XAU, XPD, XPT), the bond-market and accounting units (XBA–XBD, XDR, XSU, XUA) and the
 * testing code (XTS) and the code for "no currency": nothing a card spends or an account holds. Minor units are ISO's:
 * 0 for BIF, CLP, DJF, GNF, ISK, JPY, KMF, KRW, PYG, RWF, UGX, VND, VUV, XAF, XOF, XPF; 3 for BHD, IQD, JOD, KWD,
 * LYD, OMR, TND; 2 for every other.
 */

const ZERO_DECIMALS = [
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'ISK',
  'JPY',
  'KMF',
  'KRW',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]
const THREE_DECIMALS = ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND']
const TWO_DECIMALS = [
  'AED',
  'AFN',
  'ALL',
  'AMD',
  'ANG',
  'AOA',
  'ARS',
  'AUD',
  'AWG',
  'AZN',
  'BAM',
  'BBD',
  'BDT',
  'BGN',
  'BMD',
  'BND',
  'BOB',
  'BRL',
  'BSD',
  'BTN',
  'BWP',
  'BYN',
  'BZD',
  'CAD',
  'CDF',
  'CHF',
  'CNY',
  'COP',
  'CRC',
  'CUP',
  'CVE',
  'CZK',
  'DKK',
  'DOP',
  'DZD',
  'EGP',
  'ERN',
  'ETB',
  'EUR',
  'FJD',
  'FKP',
  'GBP',
  'GEL',
  'GHS',
  'GIP',
  'GMD',
  'GTQ',
  'GYD',
  'HKD',
  'HNL',
  'HTG',
  'HUF',
  'IDR',
  'ILS',
  'INR',
  'IRR',
  'JMD',
  'KES',
  'KGS',
  'KHR',
  'KPW',
  'KYD',
  'KZT',
  'LAK',
  'LBP',
  'LKR',
  'LRD',
  'LSL',
  'MAD',
  'MDL',
  'MGA',
  'MKD',
  'MMK',
  'MNT',
  'MOP',
  'MRU',
  'MUR',
  'MVR',
  'MWK',
  'MXN',
  'MYR',
  'MZN',
  'NAD',
  'NGN',
  'NIO',
  'NOK',
  'NPR',
  'NZD',
  'PAB',
  'PEN',
  'PGK',
  'PHP',
  'PKR',
  'PLN',
  'QAR',
  'RON',
  'RSD',
  'RUB',
  'SAR',
  'SBD',
  'SCR',
  'SDG',
  'SEK',
  'SGD',
  'SHP',
  'SLE',
  'SOS',
  'SRD',
  'SSP',
  'STN',
  'SVC',
  'SYP',
  'SZL',
  'THB',
  'TJS',
  'TMT',
  'TOP',
  'TRY',
  'TTD',
  'TWD',
  'TZS',
  'UAH',
  'USD',
  'UYU',
  'UZS',
  'VES',
  'WST',
  'XCD',
  'XCG',
  'YER',
  'ZAR',
  'ZMW',
  'ZWG',
]

/** Minor units by upper-case ISO 4217 code. */
export const CURRENCY_MINOR_UNITS: Readonly<Record<string, 0 | 2 | 3>> = Object.freeze(
  Object.fromEntries([
    ...ZERO_DECIMALS.map((c) => [c, 0] as const),
    ...TWO_DECIMALS.map((c) => [c, 2] as const),
    ...THREE_DECIMALS.map((c) => [c, 3] as const),
  ]),
)

/** Every code the service knows, in alphabetical order. */
export const CURRENCIES: readonly string[] = Object.freeze(Object.keys(CURRENCY_MINOR_UNITS).sort())

const KNOWN: ReadonlySet<string> = new Set(CURRENCIES)

/** Whether `code` is a currency the service knows: an upper-case ISO 4217 code of the table (callers upper-case input first). */
export function knownCurrency(code: string): boolean {
  return KNOWN.has(code)
}

/** A currency code the service does not know. */
export class UnknownCurrencyError extends RangeError {
  constructor(readonly code: string) {
    super(`${JSON.stringify(code)} is not an ISO 4217 currency the service knows.`)
    this.name = 'UnknownCurrencyError'
  }
}

/** The minor units of a known currency (2 for USD, 0 for JPY, 3 for KWD); an unknown code throws `UnknownCurrencyError`. */
export function minorUnitsOf(code: string): 0 | 2 | 3 {
  const digits = KNOWN.has(code) ? CURRENCY_MINOR_UNITS[code] : undefined
  if (digits === undefined) throw new UnknownCurrencyError(code)
  return digits
}
