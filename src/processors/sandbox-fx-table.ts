import { knownCurrency } from '../lib/currencies.js'
import { crossRate, FxCurrencyError } from '../lib/fx.js'

/**
 * The sandbox rate table: what the simulated processors convert at when an organization has pinned no rate. One
 * built-in, fixed rate per currency the service knows, as units of the currency per 1 US dollar (rounded market
 * levels of 2024–2025, pegs at their pegged values: AED 3.6725, HKD 7.78, XOF and XAF 655.957 per euro, …). Rates
 * between two other currencies are crossed through the dollar in exact decimal arithmetic and rounded to 12
 * significant digits (`crossRate`). The table never moves, so a sandbox test converts the same way every day;
 * a test that wants a particular rate pins it (`PUT /v1/simulate/fx_rates/{base}/{quote}`).
 */
export const SANDBOX_UNITS_PER_USD: Readonly<Record<string, string>> = Object.freeze({
  AED: '3.6725', AFN: '70.5', ALL: '92.5', AMD: '387', ANG: '1.79', AOA: '912', ARS: '1050', AUD: '1.53', AWG: '1.79', AZN: '1.7',
  BAM: '1.7994', BBD: '2', BDT: '119.5', BGN: '1.7994', BHD: '0.376', BIF: '2900', BMD: '1', BND: '1.34', BOB: '6.91', BRL: '5.65',
  BSD: '1', BTN: '84.5', BWP: '13.6', BYN: '3.27', BZD: '2',
  CAD: '1.39', CDF: '2850', CHF: '0.88', CLP: '960', CNY: '7.25', COP: '4300', CRC: '510', CUP: '24', CVE: '101.44', CZK: '23.4',
  DJF: '177.721', DKK: '6.86', DOP: '60.5', DZD: '134.5',
  EGP: '49.5', ERN: '15', ETB: '122', EUR: '0.92',
  FJD: '2.27', FKP: '0.79',
  GBP: '0.79', GEL: '2.73', GHS: '15.5', GIP: '0.79', GMD: '71', GNF: '8620', GTQ: '7.72', GYD: '209',
  HKD: '7.78', HNL: '25.2', HTG: '131', HUF: '370',
  IDR: '15900', ILS: '3.7', INR: '84.5', IQD: '1310', IRR: '42000', ISK: '137',
  JMD: '158', JOD: '0.709', JPY: '151.5',
  KES: '129', KGS: '86.5', KHR: '4050', KMF: '452.6', KPW: '900', KRW: '1390', KWD: '0.3075', KYD: '0.833', KZT: '495',
  LAK: '21900', LBP: '89500', LKR: '292', LRD: '185', LSL: '18', LYD: '4.88',
  MAD: '9.95', MDL: '18.1', MGA: '4650', MKD: '56.6', MMK: '2100', MNT: '3400', MOP: '8.01', MRU: '39.8', MUR: '46.5', MVR: '15.4',
  MWK: '1735', MXN: '20.3', MYR: '4.45', MZN: '63.9',
  NAD: '18', NGN: '1650', NIO: '36.8', NOK: '11', NPR: '135.2', NZD: '1.7',
  OMR: '0.3845',
  PAB: '1', PEN: '3.78', PGK: '4', PHP: '58.5', PKR: '278', PLN: '4.05', PYG: '7850',
  QAR: '3.64',
  RON: '4.58', RSD: '107.8', RUB: '98', RWF: '1370',
  SAR: '3.75', SBD: '8.4', SCR: '13.8', SDG: '601', SEK: '10.9', SGD: '1.34', SHP: '0.79', SLE: '22.7', SOS: '571', SRD: '35',
  SSP: '3500', STN: '22.5', SVC: '8.75', SYP: '13000', SZL: '18',
  THB: '34.5', TJS: '10.65', TMT: '3.5', TND: '3.13', TOP: '2.36', TRY: '34.5', TTD: '6.78', TWD: '32.5', TZS: '2650',
  UAH: '41.3', UGX: '3670', USD: '1', UYU: '42.5', UZS: '12800',
  VES: '45', VND: '25400', VUV: '119',
  WST: '2.75',
  XAF: '603.48', XCD: '2.7', XCG: '1.79', XOF: '603.48', XPF: '109.79',
  YER: '250',
  ZAR: '18', ZMW: '27', ZWG: '26',
})

/**
 * The table's rate `base → quote` (quote-per-base, canonical decimal text). Either code unknown throws
 * `FxCurrencyError` naming `base` or `quote`; the same code twice is rate 1.
 */
export function sandboxTableRate(base: string, quote: string): string {
  if (!knownCurrency(base)) throw new FxCurrencyError(base, 'base')
  if (!knownCurrency(quote)) throw new FxCurrencyError(quote, 'quote')
  return crossRate(SANDBOX_UNITS_PER_USD[base], SANDBOX_UNITS_PER_USD[quote])
}
