import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decimalAmount, formatMoney, minorUnits } from '../../src/lib/money-format.js'

// The console's tables, the H5 pages and the CLI's lines show amounts through these: the currency's own minor units, not two.
describe('amounts shown to people', () => {
  it("uses each currency's minor units: 2 for USD, 0 for JPY, 3 for KWD", () => {
    assert.equal(minorUnits('USD'), 2)
    assert.equal(minorUnits('JPY'), 0)
    assert.equal(minorUnits('KWD'), 3)
    assert.equal(formatMoney(1250, 'USD'), '$12.50')
    assert.equal(formatMoney(1250, 'JPY'), '¥1,250')
    assert.match(formatMoney(1250, 'KWD'), /^KWD\s1\.250$/)
    assert.equal(formatMoney(-7, 'USD'), '-$0.07')
    assert.equal(formatMoney(0, 'EUR'), '€0.00')
    assert.deepEqual(
      [
        decimalAmount(1250, 'USD'),
        decimalAmount(1250, 'JPY'),
        decimalAmount(1250, 'KWD'),
        decimalAmount(123456, 'USD'),
      ],
      ['12.50', '1250', '1.250', '1234.56'],
    )
  })

  it("gives the same text when a currency's formatter is reused, and refuses a code Intl does not take", () => {
    const first = [formatMoney(123456, 'GBP'), formatMoney(5, 'GBP'), formatMoney(99, 'JPY')]
    assert.deepEqual(
      [formatMoney(123456, 'GBP'), formatMoney(5, 'GBP'), formatMoney(99, 'JPY')],
      first,
    )
    assert.deepEqual(first, ['£1,234.56', '£0.05', '¥99'])
    assert.throws(() => formatMoney(100, 'US'), RangeError)
    assert.throws(() => minorUnits('dollars'), RangeError)
  })
})
