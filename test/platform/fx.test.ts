import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import {
  convert,
  crossRate,
  divideToRate,
  formatRate,
  FX_MAX_AMOUNT,
  FxAmountError,
  FxCurrencyError,
  FxError,
  FxMarkupError,
  FxRateError,
  normalizeRate,
  parseRate,
  type ConvertInput,
} from '../../src/lib/fx.js'
import { MAX_ADJUSTMENT } from '../../src/modules/ledger/schemas.js'
import { MAX_AMOUNT } from '../../src/modules/transactions/index.js'

type Case = [label: string, input: ConvertInput, amount: number, fee: number]

describe("convert: amount = round(amount × rate × (1 + bps/10 000)) in the target's minor units, half away from zero", () => {
  const cases: Case[] = [
    [
      'EUR → USD, 10.00 at 1.0825 = 10.825 → 10.83',
      { amount: 1000, from: 'EUR', to: 'USD', rate: '1.0825' },
      1083,
      0,
    ],
    [
      'the same with 200 bps: 11.0415 → 11.04, fee 11.04 − 10.83',
      { amount: 1000, from: 'EUR', to: 'USD', rate: '1.0825', markupBps: 200 },
      1104,
      21,
    ],
    [
      'a refund converts symmetrically, fee included',
      { amount: -1000, from: 'EUR', to: 'USD', rate: '1.0825', markupBps: 200 },
      -1104,
      -21,
    ],
    [
      'USD → JPY: 1.00 at 151.5 = 151.5 yen → 152 (0 decimals)',
      { amount: 100, from: 'USD', to: 'JPY', rate: '151.5' },
      152,
      0,
    ],
    [
      'USD → JPY: −1.00 → −152, not −151',
      { amount: -100, from: 'USD', to: 'JPY', rate: '151.5' },
      -152,
      0,
    ],
    [
      'USD → JPY: 1 cent = 1.515 yen → 2',
      { amount: 1, from: 'USD', to: 'JPY', rate: '151.5' },
      2,
      0,
    ],
    [
      'JPY → BHD: 10 000 yen at 0.0024818 = 24.818 BHD (3 decimals)',
      { amount: 10_000, from: 'JPY', to: 'BHD', rate: '0.0024818' },
      24_818,
      0,
    ],
    [
      'JPY → BHD: 3 yen = 7.4454 fils → 7',
      { amount: 3, from: 'JPY', to: 'BHD', rate: '0.0024818' },
      7,
      0,
    ],
    [
      'JPY → BHD: 1 yen at 0.0025 = 2.5 fils → 3',
      { amount: 1, from: 'JPY', to: 'BHD', rate: '0.0025' },
      3,
      0,
    ],
    [
      'JPY → BHD: −1 yen at 0.0025 → −3',
      { amount: -1, from: 'JPY', to: 'BHD', rate: '0.0025' },
      -3,
      0,
    ],
    [
      'KWD → JPY: 1.000 KWD at 492.7 = 492.7 yen → 493',
      { amount: 1000, from: 'KWD', to: 'JPY', rate: '492.7' },
      493,
      0,
    ],
    [
      'KWD → JPY: 5 fils = 2.4635 yen → 2',
      { amount: 5, from: 'KWD', to: 'JPY', rate: '492.7' },
      2,
      0,
    ],
    [
      'KWD → JPY: 1 fil at 500 = 0.5 yen → 1',
      { amount: 1, from: 'KWD', to: 'JPY', rate: '500' },
      1,
      0,
    ],
    ['KWD → JPY: −1 fil at 500 → −1', { amount: -1, from: 'KWD', to: 'JPY', rate: '500' }, -1, 0],
    [
      'KWD → JPY: 3 fils at 500 = 1.5 → 2',
      { amount: 3, from: 'KWD', to: 'JPY', rate: '500' },
      2,
      0,
    ],
    [
      '.5 of a cent rounds up: 3 cents at 1.5 = 4.5 → 5',
      { amount: 3, from: 'EUR', to: 'USD', rate: '1.5' },
      5,
      0,
    ],
    [
      '.5 of a cent rounds away from zero when negative: −3 → −5',
      { amount: -3, from: 'EUR', to: 'USD', rate: '1.5' },
      -5,
      0,
    ],
    [
      'just under .5 rounds down: 1 cent at 1.4999 → 1',
      { amount: 1, from: 'EUR', to: 'USD', rate: '1.4999' },
      1,
      0,
    ],
    [
      'the fee is the difference of two roundings: 0.33 at 0.92 +150 bps = 30.8154 → 31, plain 30.36 → 30',
      { amount: 33, from: 'USD', to: 'EUR', rate: '0.92', markupBps: 150 },
      31,
      1,
    ],
    [
      'a markup too small to move the rounding is no fee',
      { amount: 5, from: 'USD', to: 'EUR', rate: '0.92', markupBps: 100 },
      5,
      0,
    ],
    [
      '1000 bps is 10 %',
      { amount: 10_000, from: 'USD', to: 'EUR', rate: '0.92', markupBps: 1000 },
      10_120,
      920,
    ],
    [
      'BHD → KWD, both 3 decimals',
      { amount: 1000, from: 'BHD', to: 'KWD', rate: '0.8178' },
      818,
      0,
    ],
    [
      'zero converts to zero',
      { amount: 0, from: 'USD', to: 'JPY', rate: '151.5', markupBps: 300 },
      0,
      0,
    ],
    [
      'a tiny amount may convert to 0 (1 rupiah in fils)',
      { amount: 1, from: 'IDR', to: 'KWD', rate: '0.0000193' },
      0,
      0,
    ],
    [
      'the same currency at rate 1 with a markup',
      { amount: 10_000, from: 'USD', to: 'USD', rate: '1', markupBps: 100 },
      10_100,
      100,
    ],
    [
      'a parsed rate is taken as it is',
      { amount: 1000, from: 'EUR', to: 'USD', rate: { units: 10825n, scale: 4 } },
      1083,
      0,
    ],
    [
      'exactly at the limit is allowed',
      { amount: FX_MAX_AMOUNT, from: 'USD', to: 'JPY', rate: '100' },
      FX_MAX_AMOUNT,
      0,
    ],
    [
      'just under it too',
      { amount: 660_000_000_000, from: 'USD', to: 'JPY', rate: '151.5' },
      999_900_000_000,
      0,
    ],
    [
      'the largest amount converts when the result fits',
      { amount: FX_MAX_AMOUNT, from: 'JPY', to: 'USD', rate: '0.0066' },
      660_000_000_000,
      0,
    ],
  ]
  for (const [label, input, amount, fee] of cases) {
    it(label, () => {
      assert.deepEqual(convert(input), { amount, feeAmount: fee })
    })
  }

  it('amount is always the conversion without markup plus the fee, and the fee is never negative for a positive amount', () => {
    const pairs: [string, string, string][] = [
      ['EUR', 'USD', '1.0825'],
      ['JPY', 'BHD', '0.0024818'],
      ['KWD', 'JPY', '492.7'],
      ['USD', 'IDR', '15900'],
    ]
    for (const [from, to, rate] of pairs) {
      for (const amount of [1, 2, 3, 7, 99, 100, 12_345, 999_999, 12_345_678]) {
        for (const markupBps of [0, 1, 50, 150, 999, 1000]) {
          const plain = convert({ amount, from, to, rate })
          const marked = convert({ amount, from, to, rate, markupBps })
          assert.equal(
            marked.amount,
            plain.amount + marked.feeAmount,
            `${amount} ${from}→${to} @${rate} +${markupBps}`,
          )
          assert.ok(marked.feeAmount >= 0)
          assert.deepEqual(convert({ amount: -amount, from, to, rate, markupBps }), {
            amount: -marked.amount || 0,
            feeAmount: -marked.feeAmount || 0,
          })
        }
      }
    }
  })

  it('never answers -0', () => {
    const { amount, feeAmount } = convert({
      amount: -1,
      from: 'IDR',
      to: 'KWD',
      rate: '0.0000193',
      markupBps: 10,
    })
    assert.ok(Object.is(amount, 0) && Object.is(feeAmount, 0))
  })
})

describe('convert refuses, with a typed error naming the parameter', () => {
  it('a result beyond the limit: overflow on amount, never wrapped or clamped', () => {
    for (const amount of [660_067_000_000, -660_067_000_000, FX_MAX_AMOUNT]) {
      const err = assertThrows(
        () => convert({ amount, from: 'USD', to: 'JPY', rate: '151.5' }),
        FxAmountError,
      )
      assert.equal(err.reason, 'overflow')
      assert.equal(err.param, 'amount')
    }
    // The markup alone can push it over.
    convert({ amount: 660_000_000_000, from: 'USD', to: 'JPY', rate: '151.5' })
    assert.equal(
      assertThrows(
        () =>
          convert({ amount: 660_000_000_000, from: 'USD', to: 'JPY', rate: '151.5', markupBps: 2 }),
        FxAmountError,
      ).reason,
      'overflow',
    )
  })

  it('a smaller limit of the caller, and never one above Number.MAX_SAFE_INTEGER', () => {
    assert.equal(
      assertThrows(
        () => convert({ amount: 700, from: 'USD', to: 'JPY', rate: '151.5', maxAmount: 1000 }),
        FxAmountError,
      ).reason,
      'overflow',
    )
    assert.deepEqual(
      convert({ amount: 10 ** 15, from: 'USD', to: 'JPY', rate: '1.515', maxAmount: 2 ** 60 }),
      { amount: 15_150_000_000_000, feeAmount: 0 },
    )
    const err = assertThrows(
      () =>
        convert({ amount: 6 * 10 ** 15, from: 'USD', to: 'EUR', rate: '1.6', maxAmount: 2 ** 60 }),
      FxAmountError,
    )
    assert.equal(err.reason, 'overflow', 'above MAX_SAFE_INTEGER')
  })

  it('an amount that is not a safe integer or is beyond the limit already', () => {
    for (const amount of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53]) {
      assert.equal(
        assertThrows(() => convert({ amount, from: 'USD', to: 'EUR', rate: '0.92' }), FxAmountError)
          .reason,
        'not_integer',
        String(amount),
      )
    }
    assert.equal(
      assertThrows(
        () => convert({ amount: FX_MAX_AMOUNT + 1, from: 'USD', to: 'EUR', rate: '0.92' }),
        FxAmountError,
      ).reason,
      'out_of_range',
    )
    assert.equal(
      assertThrows(
        () => convert({ amount: -FX_MAX_AMOUNT - 1, from: 'USD', to: 'EUR', rate: '0.92' }),
        FxAmountError,
      ).reason,
      'out_of_range',
    )
  })

  it('a currency the service does not know (codes are upper-case)', () => {
    for (const [from, to] of [
      ['XXX', 'USD'],
      ['USD', 'ZZZ'],
      ['usd', 'EUR'],
      ['HRK', 'EUR'],
      ['XAU', 'USD'],
    ]) {
      const err = assertThrows(() => convert({ amount: 100, from, to, rate: '1' }), FxCurrencyError)
      assert.equal(err.param, 'currency')
      assert.ok([from, to].includes(err.code))
    }
  })

  it('a markup outside 0–1000 or not an integer', () => {
    for (const markupBps of [-1, 1001, 1.5, Number.NaN]) {
      assert.ok(
        assertThrows(
          () => convert({ amount: 100, from: 'USD', to: 'EUR', rate: '0.92', markupBps }),
          FxMarkupError,
        ) instanceof FxError,
      )
    }
  })

  it('a bad rate, given as text or as a parsed value', () => {
    assert.equal(
      assertThrows(() => convert({ amount: 100, from: 'USD', to: 'EUR', rate: '0' }), FxRateError)
        .param,
      'rate',
    )
    for (const rate of [
      { units: 0n, scale: 0 },
      { units: -5n, scale: 1 },
      { units: 5n, scale: -1 },
      { units: 10n ** 13n, scale: 0 },
    ]) {
      assertThrows(() => convert({ amount: 100, from: 'USD', to: 'EUR', rate }), FxRateError)
    }
  })

  it('the limit is the largest single amount the service takes', () => {
    assert.equal(FX_MAX_AMOUNT, MAX_AMOUNT)
    assert.equal(FX_MAX_AMOUNT, MAX_ADJUSTMENT)
  })
})

describe('rates: positive decimal strings, at most 12 significant digits and 18 decimals', () => {
  it('reads good rates into their canonical form', () => {
    const good: [string, string][] = [
      ['1.0825', '1.0825'],
      ['151.5', '151.5'],
      ['1', '1'],
      ['0150.50', '150.5'],
      ['1.50', '1.5'],
      ['0.000006612', '0.000006612'],
      ['1.000000000000000000000', '1'],
      ['00000000000000000000001', '1'],
      ['999999999999', '999999999999'],
      ['0.000000000000000001', '0.000000000000000001'],
      ['123456.789012', '123456.789012'],
      ['10', '10'],
      ['1000000', '1000000'],
    ]
    for (const [text, canonical] of good) assert.equal(normalizeRate(text), canonical, text)
    assert.deepEqual(parseRate('150.50'), { units: 1505n, scale: 1 })
    assert.equal(formatRate({ units: 5n, scale: 3 }), '0.005')
  })

  it('refuses zero, negatives and anything that is not plain decimal text', () => {
    const bad: unknown[] = [
      '0',
      '0.000',
      '00',
      '-1.2',
      '+1.2',
      '1e3',
      '1E-3',
      '1.',
      '.5',
      ' 1.2',
      '1.2 ',
      '1,2',
      '',
      'abc',
      '1.2.3',
      '0x10',
      'Infinity',
      'NaN',
      '１',
      '1_000',
      1.2,
      0,
      null,
      undefined,
      {},
      ['1'],
      '1234567890123',
      '1000000000000',
      '0.0000000000000000001',
      '1.23456789012345',
      `1.${'0'.repeat(39)}`,
    ]
    for (const text of bad) {
      const err = assertThrows(() => parseRate(text), FxRateError)
      assert.equal(err.param, 'rate', String(text))
    }
  })
})

describe('cross rates: quote / base, rounded half up to 12 significant digits', () => {
  it('computes them in decimal', () => {
    assert.equal(crossRate('0.92', '151.5'), '164.673913043')
    assert.equal(crossRate('151.5', '0.92'), '0.00607260726073')
    assert.equal(crossRate('1', '3'), '3')
    assert.equal(crossRate('3', '1'), '0.333333333333')
    assert.equal(crossRate('89500', '0.3075'), '0.00000343575418994')
    assert.equal(crossRate('0.3075', '89500'), '291056.910569')
    assert.equal(crossRate('7.78', '7.78'), '1')
    assert.equal(crossRate('0.000001', '999999'), '999999000000')
    assert.equal(crossRate('1000000', '0.000000000001'), '0.000000000000000001')
  })

  it('refuses a result outside what a rate can be', () => {
    assertThrows(() => crossRate('0.000001', '1000000'), FxRateError)
    assertThrows(() => crossRate('10000000', '0.000000000001'), FxRateError)
    assertThrows(() => divideToRate(0n, 1n), FxRateError)
  })
})

function assertThrows<E extends Error>(fn: () => unknown, type: new (...args: any[]) => E): E {
  try {
    fn()
  } catch (err) {
    assert.ok(err instanceof type, `expected ${type.name}, got ${String(err)}`)
    return err
  }
  assert.fail(`expected ${type.name}, nothing was thrown`)
}
