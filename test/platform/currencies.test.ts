import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  CURRENCIES,
  CURRENCY_MINOR_UNITS,
  knownCurrency,
  minorUnitsOf,
  UnknownCurrencyError,
} from '../../src/lib/currencies.js'
import { decimalAmount, formatMoney, minorUnits } from '../../src/lib/money-format.js'

describe('the currencies the service knows (ISO 4217, a static table)', () => {
  it("gives ISO's minor units: 0 for JPY, KRW and the other whole-unit currencies, 3 for the dinars and rials of the Gulf, 2 for the rest", () => {
    for (const code of [
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
    ]) {
      assert.equal(minorUnitsOf(code), 0, code)
    }
    for (const code of ['BHD', 'IQD', 'JOD', 'KWD', 'LYD', 'OMR', 'TND'])
      assert.equal(minorUnitsOf(code), 3, code)
    for (const code of ['USD', 'EUR', 'GBP', 'CHF', 'HUF', 'IDR', 'COP', 'INR', 'MGA', 'MRU'])
      assert.equal(minorUnitsOf(code), 2, code)
    const counts = { 0: 0, 2: 0, 3: 0 }
    for (const code of CURRENCIES) counts[CURRENCY_MINOR_UNITS[code]] += 1
    assert.deepEqual([counts[0], counts[3]], [16, 7])
  })

  it('holds every spendable ISO 4217 code once, sorted, and none of the funds, metals or test codes', () => {
    assert.ok(CURRENCIES.length >= 150, `${CURRENCIES.length} codes`)
    assert.deepEqual([...CURRENCIES].sort(), CURRENCIES)
    assert.equal(new Set(CURRENCIES).size, CURRENCIES.length)
    for (const code of CURRENCIES) assert.match(code, /^[A-Z]{3}$/)
    for (const code of [
      'XAU',
      'XAG',
      'XPT',
      'XPD',
      'XDR',
      'XTS',
      'XXX',
      'BOV',
      'CLF',
      'UYI',
      'USN',
      'HRK',
      'SLL',
      'VEF',
      'MRO',
    ]) {
      assert.equal(knownCurrency(code), false, code)
    }
    // Every code is one Intl can format with (the console shows amounts through it).
    const intl = new Set(Intl.supportedValuesOf('currency'))
    assert.deepEqual(
      CURRENCIES.filter((c) => !intl.has(c)),
      [],
    )
  })

  it('is exact about case and refuses what it does not know', () => {
    assert.equal(knownCurrency('USD'), true)
    assert.equal(knownCurrency('usd'), false, 'callers upper-case input first')
    for (const code of ['', 'US', 'USDD', 'ZZZ', 'toString', '__proto__']) {
      assert.equal(knownCurrency(code), false, code)
      assert.throws(() => minorUnitsOf(code), UnknownCurrencyError)
    }
    assert.ok(new UnknownCurrencyError('ZZZ') instanceof RangeError)
  })

  it('is what amounts are shown with, where Intl would say otherwise', () => {
    // Intl (CLDR) says 0 for HUF, IDR and COP and 0 for IQD; an amount is always in ISO's minor units.
    assert.deepEqual(['HUF', 'IDR', 'COP', 'IQD', 'usd'].map(minorUnits), [2, 2, 2, 3, 2])
    assert.equal(decimalAmount(123_456, 'HUF'), '1234.56')
    assert.equal(decimalAmount(1250, 'IQD'), '1.250')
    assert.match(formatMoney(1250, 'IQD'), /1\.250$/)
    for (const code of CURRENCIES) assert.equal(minorUnits(code), minorUnitsOf(code), code)
  })
})
