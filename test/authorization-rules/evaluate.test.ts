import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  type AuthorizationFacts,
  type CardTarget,
  conditionHolds,
  type EvaluableRule,
  evaluateRule,
  evaluateRules,
  matchesPattern,
  matchesVelocityFilters,
  rulesThatApply,
  ruleDeclines,
  scopeIncludes,
} from '../../src/modules/authorization-rules/evaluate.js'
import { readParameters } from '../../src/modules/authorization-rules/parameters.js'
import type {
  Condition,
  RuleParameters,
  RuleWindow,
  VelocityLimitParameters,
} from '../../src/modules/authorization-rules/rule.js'
import {
  countsInWindow,
  rollingResetsAt,
  windowResetsAt,
  windowStart,
} from '../../src/modules/authorization-rules/windows.js'
import type { ApiError } from '../../src/http/errors.js'

const at = (text: string) => new Date(text)
const iso = (d: Date | null) => (d === null ? null : d.toISOString())
const calendar = (type: RuleWindow['type']): RuleWindow => ({ type, seconds: null })
const rolling = (seconds: number): RuleWindow => ({ type: 'rolling', seconds })

const FACTS: AuthorizationFacts = {
  mcc: '5814',
  merchant_country: 'USA',
  merchant_currency: 'USD',
  merchant_name: 'Blue Bottle Coffee',
  amount: 1250,
  merchant_amount: 1250,
  card_age_seconds: 86_400,
  authorization_count_1h: 2,
  decline_count_1h: 0,
}
const facts = (over: Partial<AuthorizationFacts> = {}): AuthorizationFacts => ({
  ...FACTS,
  ...over,
})

/** A rule of `parameters` as the service stores it (read, so normalized), with an id and a mode. */
function rule(
  type: RuleParameters['type'],
  parameters: unknown,
  mode: 'active' | 'shadow' = 'active',
  id = 'arl_1',
): EvaluableRule {
  return { id, mode, ...readParameters(type, parameters) } as EvaluableRule
}

/** The failing fields `readParameters` answers: `[code, param]` each, in the order found. */
function refusal(type: RuleParameters['type'], parameters: unknown): [string, string][] {
  try {
    readParameters(type, parameters)
  } catch (err) {
    const e = err as ApiError
    return (e.errors ?? [{ code: e.code, param: e.param! }]).map((f) => [f.code, f.param])
  }
  assert.fail(`accepted ${JSON.stringify(parameters)}`)
}

describe('windows: calendar periods in UTC, rolling windows behind now', () => {
  test('day: from 00:00 UTC, reset at the next midnight, whatever the time of day', () => {
    for (const now of [
      '2026-11-04T00:00:00.000Z',
      '2026-11-04T13:45:10.000Z',
      '2026-11-04T23:59:59.999Z',
    ]) {
      assert.equal(iso(windowStart(calendar('day'), at(now))), '2026-11-04T00:00:00.000Z', now)
      assert.equal(iso(windowResetsAt(calendar('day'), at(now))), '2026-11-05T00:00:00.000Z', now)
    }
    assert.equal(
      iso(windowResetsAt(calendar('day'), at('2026-12-31T10:00:00Z'))),
      '2027-01-01T00:00:00.000Z',
    )
  })

  test('week: from Monday 00:00 UTC (a Sunday belongs to the week that began six days before), reset the next Monday', () => {
    // 2026-11-02 is a Monday.
    const cases: [string, string][] = [
      ['2026-11-02T00:00:00.000Z', '2026-11-02'],
      ['2026-11-04T12:00:00.000Z', '2026-11-02'],
      ['2026-11-08T23:59:59.999Z', '2026-11-02'],
      ['2026-11-09T00:00:00.000Z', '2026-11-09'],
      // Across a month and a year.
      ['2026-12-01T08:00:00.000Z', '2026-11-30'],
      ['2027-01-02T08:00:00.000Z', '2026-12-28'],
    ]
    for (const [now, monday] of cases) {
      const start = windowStart(calendar('week'), at(now))!
      assert.equal(iso(start), `${monday}T00:00:00.000Z`, now)
      assert.equal(start.getUTCDay(), 1, `${now}: a Monday`)
      assert.equal(
        windowResetsAt(calendar('week'), at(now))!.getTime() - start.getTime(),
        7 * 86_400_000,
        now,
      )
    }
  })

  test('month: from the first day, reset on the first of the next (December rolls into January; leap days count)', () => {
    assert.equal(
      iso(windowStart(calendar('month'), at('2026-11-30T23:59:59Z'))),
      '2026-11-01T00:00:00.000Z',
    )
    assert.equal(
      iso(windowResetsAt(calendar('month'), at('2026-11-30T23:59:59Z'))),
      '2026-12-01T00:00:00.000Z',
    )
    assert.equal(
      iso(windowResetsAt(calendar('month'), at('2026-12-15T00:00:00Z'))),
      '2027-01-01T00:00:00.000Z',
    )
    assert.equal(
      iso(windowStart(calendar('month'), at('2028-02-29T12:00:00Z'))),
      '2028-02-01T00:00:00.000Z',
    )
    assert.equal(
      iso(windowResetsAt(calendar('month'), at('2028-02-29T12:00:00Z'))),
      '2028-03-01T00:00:00.000Z',
    )
    assert.equal(
      iso(windowResetsAt(calendar('month'), at('2026-01-31T12:00:00Z'))),
      '2026-02-01T00:00:00.000Z',
    )
  })

  test('year: from 1 January, reset the next 1 January', () => {
    assert.equal(
      iso(windowStart(calendar('year'), at('2026-07-04T10:00:00Z'))),
      '2026-01-01T00:00:00.000Z',
    )
    assert.equal(
      iso(windowResetsAt(calendar('year'), at('2026-12-31T23:59:59.999Z'))),
      '2027-01-01T00:00:00.000Z',
    )
    assert.equal(
      iso(windowStart(calendar('year'), at('2027-01-01T00:00:00Z'))),
      '2027-01-01T00:00:00.000Z',
    )
  })

  test('all_time: no start and no reset; everything up to now counts', () => {
    assert.equal(windowStart(calendar('all_time'), at('2026-11-04T10:00:00Z')), null)
    assert.equal(windowResetsAt(calendar('all_time'), at('2026-11-04T10:00:00Z')), null)
    assert.ok(
      countsInWindow(calendar('all_time'), at('1999-01-01T00:00:00Z'), at('2026-11-04T10:00:00Z')),
    )
  })

  test('rolling: the last `seconds` before now, no reset of its own; the oldest counted leaves it `seconds` after it was made', () => {
    const w = rolling(3600)
    const now = at('2026-11-04T10:00:00.000Z')
    assert.equal(iso(windowStart(w, now)), '2026-11-04T09:00:00.000Z')
    assert.equal(windowResetsAt(w, now), null)
    assert.equal(
      iso(rollingResetsAt(w, at('2026-11-04T09:20:00.000Z'))),
      '2026-11-04T10:20:00.000Z',
    )
    assert.equal(rollingResetsAt(w, null), null)
    // (now − 3600 s, now]: exactly an hour old has left; a millisecond younger still counts.
    assert.equal(countsInWindow(w, at('2026-11-04T09:00:00.000Z'), now), false)
    assert.equal(countsInWindow(w, at('2026-11-04T09:00:00.001Z'), now), true)
    assert.equal(countsInWindow(w, now, now), true)
    assert.equal(countsInWindow(w, at('2026-11-04T10:00:00.001Z'), now), false, 'not after now')
    assert.throws(() => windowStart({ type: 'rolling', seconds: null }, now), RangeError)
    assert.throws(() => rollingResetsAt(calendar('day'), now), RangeError)
  })

  test('calendar windows count from their first instant on', () => {
    const now = at('2026-11-04T10:00:00Z')
    assert.equal(countsInWindow(calendar('day'), at('2026-11-04T00:00:00.000Z'), now), true)
    assert.equal(countsInWindow(calendar('day'), at('2026-11-03T23:59:59.999Z'), now), false)
    assert.equal(countsInWindow(calendar('week'), at('2026-11-02T00:00:00.000Z'), now), true)
    assert.equal(countsInWindow(calendar('week'), at('2026-11-01T23:59:59.999Z'), now), false)
  })
})

describe('parameters: read against the type, normalized, every bad field named', () => {
  test('a velocity limit gets every key: seconds null on calendar windows, empty filters, the missing limit null', () => {
    assert.deepEqual(
      readParameters('velocity_limit', {
        window: { type: 'day' },
        aggregate: 'card',
        limit_amount: 50000,
      }),
      {
        type: 'velocity_limit',
        parameters: {
          window: { type: 'day', seconds: null },
          aggregate: 'card',
          limit_amount: 50000,
          limit_count: null,
          filters: {
            include_mccs: [],
            exclude_mccs: [],
            include_countries: [],
            exclude_countries: [],
            merchant_currencies: [],
          },
        },
      },
    )
    const read = readParameters('velocity_limit', {
      window: { type: 'rolling', seconds: 3600 },
      aggregate: 'cardholder',
      limit_count: 3,
      filters: {
        include_countries: ['fra', 'FRA', 'deu'],
        merchant_currencies: ['eur'],
        exclude_mccs: ['7995'],
      },
    }).parameters as VelocityLimitParameters
    assert.deepEqual(read.window, { type: 'rolling', seconds: 3600 })
    assert.deepEqual(
      read.filters.include_countries,
      ['FRA', 'DEU'],
      'upper-cased, duplicates dropped',
    )
    assert.deepEqual(read.filters.merchant_currencies, ['EUR'])
    assert.deepEqual(read.filters.exclude_mccs, ['7995'])
  })

  test('velocity limit refusals name the field', () => {
    const base = { window: { type: 'day' }, aggregate: 'card', limit_amount: 100 }
    const cases: [unknown, [string, string][]][] = [
      [
        { ...base, window: { type: 'fortnight' } },
        [['invalid_parameter', 'parameters.window.type']],
      ],
      [
        { ...base, window: { type: 'rolling' } },
        [['missing_parameter', 'parameters.window.seconds']],
      ],
      [
        { ...base, window: { type: 'rolling', seconds: 59 } },
        [['invalid_parameter', 'parameters.window.seconds']],
      ],
      [
        { ...base, window: { type: 'rolling', seconds: 366 * 86_400 } },
        [['invalid_parameter', 'parameters.window.seconds']],
      ],
      [
        { ...base, window: { type: 'rolling', seconds: 1.5 } },
        [['invalid_parameter', 'parameters.window.seconds']],
      ],
      [
        { ...base, window: { type: 'day', seconds: 60 } },
        [['invalid_parameter', 'parameters.window.seconds']],
      ],
      [{ ...base, window: 'day' }, [['invalid_parameter', 'parameters.window']]],
      [
        { ...base, window: { type: 'day', length: 1 } },
        [['unknown_parameter', 'parameters.window.length']],
      ],
      [{ ...base, aggregate: 'program' }, [['invalid_parameter', 'parameters.aggregate']]],
      [
        { window: { type: 'day' }, aggregate: 'card' },
        [['invalid_parameter', 'parameters.limit_amount']],
      ],
      [
        { ...base, limit_amount: null, limit_count: null },
        [['invalid_parameter', 'parameters.limit_amount']],
      ],
      [{ ...base, limit_amount: 0 }, [['invalid_parameter', 'parameters.limit_amount']]],
      [{ ...base, limit_amount: '100' }, [['invalid_parameter', 'parameters.limit_amount']]],
      [{ ...base, limit_count: 0 }, [['invalid_parameter', 'parameters.limit_count']]],
      [{ ...base, limit_amount: 1e12 + 1 }, [['invalid_parameter', 'parameters.limit_amount']]],
      [
        { ...base, filters: { include_mccs: ['5814', '7995', '79'] } },
        [['invalid_parameter', 'parameters.filters.include_mccs[2]']],
      ],
      [
        { ...base, filters: { exclude_countries: ['ZZZ'] } },
        [['invalid_parameter', 'parameters.filters.exclude_countries[0]']],
      ],
      [
        { ...base, filters: { merchant_currencies: ['USD', 'XXQ'] } },
        [['invalid_parameter', 'parameters.filters.merchant_currencies[1]']],
      ],
      [
        { ...base, filters: { include_mccs: '5814' } },
        [['invalid_parameter', 'parameters.filters.include_mccs']],
      ],
      [{ ...base, filters: { mccs: [] } }, [['unknown_parameter', 'parameters.filters.mccs']]],
      [
        { ...base, filters: { include_mccs: ['5814'], exclude_mccs: ['7995'] } },
        [['invalid_parameter', 'parameters.filters.exclude_mccs']],
      ],
      [{ ...base, limit: 5 }, [['unknown_parameter', 'parameters.limit']]],
      [{ aggregate: 'card', limit_count: 1 }, [['missing_parameter', 'parameters.window']]],
      [[], [['invalid_parameter', 'parameters']]],
    ]
    for (const [parameters, want] of cases)
      assert.deepEqual(refusal('velocity_limit', parameters), want, JSON.stringify(parameters))
  })

  test('several bad fields are all reported', () => {
    assert.deepEqual(
      refusal('velocity_limit', {
        window: { type: 'hour' },
        aggregate: 'program',
        limit_count: -1,
      }),
      [
        ['invalid_parameter', 'parameters.window.type'],
        ['invalid_parameter', 'parameters.aggregate'],
        ['invalid_parameter', 'parameters.limit_count'],
      ],
    )
  })

  test('conditions: codes upper-cased, numbers kept, lists deduplicated', () => {
    const read = readParameters('condition', {
      conditions: [
        { attribute: 'merchant_country', operator: 'is_one_of', value: ['usa', 'CAN', 'USA'] },
        { attribute: 'merchant_currency', operator: 'is_not', value: 'eur' },
        { attribute: 'amount', operator: 'gte', value: 0 },
        { attribute: 'merchant_name', operator: 'matches', value: '*Casino*' },
        { attribute: 'mcc', operator: 'matches', value: '79??' },
      ],
    })
    assert.deepEqual(read.parameters, {
      conditions: [
        { attribute: 'merchant_country', operator: 'is_one_of', value: ['USA', 'CAN'] },
        { attribute: 'merchant_currency', operator: 'is_not', value: 'EUR' },
        { attribute: 'amount', operator: 'gte', value: 0 },
        { attribute: 'merchant_name', operator: 'matches', value: '*Casino*' },
        { attribute: 'mcc', operator: 'matches', value: '79??' },
      ],
    })
  })

  test('condition refusals name the condition and its part', () => {
    const ok = { attribute: 'amount', operator: 'gt', value: 100 }
    const cases: [unknown, [string, string][]][] = [
      [
        { conditions: [ok, { ...ok, attribute: 'merchant_city' }] },
        [['invalid_parameter', 'parameters.conditions[1].attribute']],
      ],
      [
        { conditions: [{ ...ok, operator: 'contains' }] },
        [['invalid_parameter', 'parameters.conditions[0].operator']],
      ],
      [
        { conditions: [{ ...ok, operator: 'matches', value: '1*' }] },
        [['invalid_parameter', 'parameters.conditions[0].operator']],
      ],
      [
        { conditions: [{ attribute: 'merchant_name', operator: 'gt', value: 'A' }] },
        [['invalid_parameter', 'parameters.conditions[0].operator']],
      ],
      [
        { conditions: [{ ...ok, value: '100' }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ ...ok, value: -1 }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ ...ok, value: [100] }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ ...ok, operator: 'is_one_of', value: 100 }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ ...ok, operator: 'is_one_of', value: [] }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ attribute: 'mcc', operator: 'is_one_of', value: ['5814', 'food'] }] },
        [['invalid_parameter', 'parameters.conditions[0].value[1]']],
      ],
      [
        { conditions: [{ attribute: 'merchant_country', operator: 'is', value: 'US' }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ attribute: 'merchant_currency', operator: 'is', value: 'ABC' }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ attribute: 'mcc', operator: 'matches', value: '7a*' }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ attribute: 'merchant_name', operator: 'is', value: '' }] },
        [['invalid_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ attribute: 'amount', operator: 'gt' }] },
        [['missing_parameter', 'parameters.conditions[0].value']],
      ],
      [
        { conditions: [{ ...ok, negate: true }] },
        [['unknown_parameter', 'parameters.conditions[0].negate']],
      ],
      [{ conditions: [] }, [['invalid_parameter', 'parameters.conditions']]],
      [{ conditions: Array(21).fill(ok) }, [['invalid_parameter', 'parameters.conditions']]],
      [{}, [['missing_parameter', 'parameters.conditions']]],
    ]
    for (const [parameters, want] of cases)
      assert.deepEqual(refusal('condition', parameters), want, JSON.stringify(parameters))
  })

  test('merchant locks: every part optional, one at least; refusals named', () => {
    assert.deepEqual(
      readParameters('merchant_lock', {
        merchants: [{ name: 'AMZN*' }, { mcc: '5411', country: 'usa' }],
      }).parameters,
      {
        merchants: [
          { name: 'AMZN*', mcc: null, country: null },
          { name: null, mcc: '5411', country: 'USA' },
        ],
      },
    )
    assert.deepEqual(refusal('merchant_lock', { merchants: [{ name: 'A' }, {}] }), [
      ['invalid_parameter', 'parameters.merchants[1]'],
    ])
    assert.deepEqual(refusal('merchant_lock', { merchants: [{ mcc: '54' }] }), [
      ['invalid_parameter', 'parameters.merchants[0].mcc'],
    ])
    assert.deepEqual(refusal('merchant_lock', { merchants: [{ city: 'Paris' }] }), [
      ['unknown_parameter', 'parameters.merchants[0].city'],
      ['invalid_parameter', 'parameters.merchants[0]'],
    ])
    assert.deepEqual(refusal('merchant_lock', { merchants: [] }), [
      ['invalid_parameter', 'parameters.merchants'],
    ])
  })
})

describe('velocity limits', () => {
  const limit = (over: Record<string, unknown> = {}) =>
    rule('velocity_limit', { window: { type: 'day' }, aggregate: 'card', ...over })

  test('an amount limit: up to the limit passes, a minor unit past it declines', () => {
    const r = limit({ limit_amount: 10_000 })
    assert.equal(
      evaluateRule(r, facts({ amount: 2_000 }), { used_amount: 8_000, used_count: 5 }),
      'passed',
    )
    assert.equal(
      evaluateRule(r, facts({ amount: 2_001 }), { used_amount: 8_000, used_count: 5 }),
      'declined',
    )
    assert.equal(
      evaluateRule(r, facts({ amount: 10_001 }), { used_amount: 0, used_count: 0 }),
      'declined',
    )
  })

  test('a count limit: the request is the n-th authorization; an increment adds none', () => {
    const r = limit({ limit_count: 3 })
    assert.equal(evaluateRule(r, facts(), { used_amount: 0, used_count: 2 }), 'passed')
    assert.equal(evaluateRule(r, facts(), { used_amount: 0, used_count: 3 }), 'declined')
    assert.equal(
      evaluateRule(r, facts({ increment: true }), { used_amount: 0, used_count: 3 }),
      'passed',
    )
  })

  test('both limits: either one declines', () => {
    const r = limit({ limit_amount: 5_000, limit_count: 2 })
    assert.equal(
      evaluateRule(r, facts({ amount: 100 }), { used_amount: 0, used_count: 2 }),
      'declined',
    )
    assert.equal(
      evaluateRule(r, facts({ amount: 5_001 }), { used_amount: 0, used_count: 0 }),
      'declined',
    )
    assert.equal(
      evaluateRule(r, facts({ amount: 5_000 }), { used_amount: 0, used_count: 1 }),
      'passed',
    )
  })

  test('the amount compared is the account currency one, not the merchant amount', () => {
    const r = limit({ limit_amount: 1_000 })
    assert.equal(
      evaluateRule(r, facts({ amount: 900, merchant_amount: 150_000 }), {
        used_amount: 0,
        used_count: 0,
      }),
      'passed',
    )
  })

  test('filters: only what they let through is limited', () => {
    const gambling = limit({ limit_amount: 1, filters: { include_mccs: ['7995'] } })
    const big = { used_amount: 0, used_count: 0 }
    assert.equal(evaluateRule(gambling, facts({ mcc: '5814' }), big), 'passed')
    assert.equal(evaluateRule(gambling, facts({ mcc: '7995', amount: 2 }), big), 'declined')
    assert.equal(
      evaluateRule(gambling, facts({ mcc: null, amount: 2 }), big),
      'passed',
      'an unknown mcc is not included',
    )

    const p = (filters: Record<string, unknown>) =>
      (
        readParameters('velocity_limit', {
          window: { type: 'day' },
          aggregate: 'card',
          limit_count: 1,
          filters,
        }).parameters as VelocityLimitParameters
      ).filters
    assert.equal(matchesVelocityFilters(p({ exclude_mccs: ['5814'] }), facts()), false)
    assert.equal(matchesVelocityFilters(p({ exclude_mccs: ['5814'] }), facts({ mcc: null })), true)
    assert.equal(matchesVelocityFilters(p({ include_countries: ['FRA'] }), facts()), false)
    assert.equal(
      matchesVelocityFilters(p({ include_countries: ['FRA'] }), facts({ merchant_country: 'fra' })),
      true,
    )
    assert.equal(
      matchesVelocityFilters(p({ include_countries: ['FRA'] }), facts({ merchant_country: null })),
      false,
    )
    assert.equal(matchesVelocityFilters(p({ exclude_countries: ['USA'] }), facts()), false)
    assert.equal(
      matchesVelocityFilters(p({ exclude_countries: ['USA'] }), facts({ merchant_country: null })),
      true,
    )
    assert.equal(matchesVelocityFilters(p({ merchant_currencies: ['EUR'] }), facts()), false)
    assert.equal(
      matchesVelocityFilters(
        p({ merchant_currencies: ['EUR'] }),
        facts({ merchant_currency: 'eur' }),
      ),
      true,
    )
    assert.equal(matchesVelocityFilters(p({}), facts()), true)
  })

  test('a velocity limit needs its window usage', () => {
    assert.throws(() => evaluateRule(limit({ limit_count: 1 }), facts()), TypeError)
  })
})

describe('conditions: all must hold to decline', () => {
  const cond = (attribute: string, operator: string, value: unknown) =>
    (
      readParameters('condition', { conditions: [{ attribute, operator, value }] }).parameters as {
        conditions: Condition[]
      }
    ).conditions[0]

  test('each operator on text attributes, without regard to case', () => {
    assert.ok(conditionHolds(cond('merchant_name', 'is', 'blue bottle coffee'), facts()))
    assert.ok(!conditionHolds(cond('merchant_name', 'is_not', 'BLUE BOTTLE COFFEE'), facts()))
    assert.ok(conditionHolds(cond('mcc', 'is_one_of', ['5812', '5814']), facts()))
    assert.ok(!conditionHolds(cond('mcc', 'is_not_one_of', ['5812', '5814']), facts()))
    assert.ok(conditionHolds(cond('merchant_country', 'is', 'usa'), facts()))
    assert.ok(
      conditionHolds(cond('merchant_country', 'is', 'USA'), facts({ merchant_country: 'usa' })),
    )
    assert.ok(conditionHolds(cond('merchant_currency', 'is_not', 'EUR'), facts()))
    assert.ok(conditionHolds(cond('merchant_name', 'matches', '*bottle*'), facts()))
    assert.ok(!conditionHolds(cond('merchant_name', 'matches', 'bottle*'), facts()))
    assert.ok(conditionHolds(cond('mcc', 'matches', '58??'), facts()))
    assert.ok(conditionHolds(cond('merchant_country', 'matches', 'U*'), facts()))
  })

  test('each operator on numbers', () => {
    const f = facts({
      amount: 1000,
      card_age_seconds: 30,
      authorization_count_1h: 4,
      decline_count_1h: 2,
    })
    assert.ok(conditionHolds(cond('amount', 'is', 1000), f))
    assert.ok(!conditionHolds(cond('amount', 'is_not', 1000), f))
    assert.ok(conditionHolds(cond('amount', 'is_one_of', [5, 1000]), f))
    assert.ok(conditionHolds(cond('amount', 'is_not_one_of', [5, 10]), f))
    assert.ok(conditionHolds(cond('amount', 'gt', 999), f))
    assert.ok(!conditionHolds(cond('amount', 'gt', 1000), f))
    assert.ok(conditionHolds(cond('amount', 'gte', 1000), f))
    assert.ok(conditionHolds(cond('amount', 'lt', 1001), f))
    assert.ok(!conditionHolds(cond('amount', 'lt', 1000), f))
    assert.ok(conditionHolds(cond('amount', 'lte', 1000), f))
    assert.ok(conditionHolds(cond('card_age_seconds', 'lt', 60), f))
    assert.ok(conditionHolds(cond('authorization_count_1h', 'gte', 4), f))
    assert.ok(conditionHolds(cond('decline_count_1h', 'gt', 1), f))
    assert.ok(conditionHolds(cond('merchant_amount', 'is', 1250), f))
  })

  test('an unknown merchant country or name equals nothing: is, is_one_of and matches fail; is_not and is_not_one_of hold', () => {
    const f = facts({ merchant_country: null, merchant_name: null, mcc: null })
    assert.ok(!conditionHolds(cond('merchant_country', 'is', 'USA'), f))
    assert.ok(!conditionHolds(cond('merchant_country', 'is_one_of', ['USA']), f))
    assert.ok(!conditionHolds(cond('merchant_name', 'matches', '*'), f))
    assert.ok(conditionHolds(cond('merchant_country', 'is_not', 'USA'), f))
    assert.ok(conditionHolds(cond('mcc', 'is_not_one_of', ['5814']), f))
  })

  test('the rule declines only when every condition holds; a shadow rule would decline instead', () => {
    const conditions = [
      { attribute: 'merchant_country', operator: 'is_not', value: 'USA' },
      { attribute: 'amount', operator: 'gt', value: 20_000 },
    ]
    const active = rule('condition', { conditions })
    const shadow = rule('condition', { conditions }, 'shadow')
    assert.equal(
      evaluateRule(active, facts({ merchant_country: 'FRA', amount: 20_001 })),
      'declined',
    )
    assert.equal(
      evaluateRule(shadow, facts({ merchant_country: 'FRA', amount: 20_001 })),
      'would_decline',
    )
    assert.equal(evaluateRule(active, facts({ merchant_country: 'FRA', amount: 20_000 })), 'passed')
    assert.equal(evaluateRule(active, facts({ merchant_country: 'USA', amount: 90_000 })), 'passed')
    assert.equal(evaluateRule(shadow, facts({ merchant_country: 'USA', amount: 90_000 })), 'passed')
  })
})

describe('wildcard patterns', () => {
  test('* any run (none too), ? one character, the whole text, any case', () => {
    const yes: [string, string][] = [
      ['AMZN*', 'amzn mktp us*2K4'],
      ['*', ''],
      ['*', 'anything'],
      ['a*b*c', 'abc'],
      ['a*b*c', 'aXXbYYc'],
      ['?', 'x'],
      ['h?tel*', 'Hotel Aurora'],
      ['*aurora', 'Hotel Aurora'],
      ['exact', 'EXACT'],
      ['**a**', 'a'],
    ]
    const no: [string, string][] = [
      ['AMZN*', 'The AMZN shop'],
      ['?', ''],
      ['?', 'xy'],
      ['a*b*c', 'abca!'],
      ['exact', 'exactly'],
      ['*aurora', 'Aurora Hotel'],
      ['a?c', 'ac'],
    ]
    for (const [p, s] of yes) assert.ok(matchesPattern(p, s), `${p} ~ ${s}`)
    for (const [p, s] of no) assert.ok(!matchesPattern(p, s), `${p} !~ ${s}`)
  })

  test('a pattern built to backtrack answers at once', () => {
    const started = process.hrtime.bigint()
    assert.equal(matchesPattern(`${'*a'.repeat(60)}b`, 'a'.repeat(200)), false)
    assert.ok(process.hrtime.bigint() - started < 50_000_000n, 'under 50 ms')
  })
})

describe('merchant locks: only the merchants named may be approved', () => {
  const lock = rule('merchant_lock', {
    merchants: [{ name: 'AMZN*' }, { mcc: '5411', country: 'USA' }],
  })

  test('one matching entry lets it through; an entry matches when every part it names does', () => {
    assert.equal(evaluateRule(lock, facts({ merchant_name: 'AMZN Mktp US' })), 'passed')
    assert.equal(evaluateRule(lock, facts({ mcc: '5411', merchant_country: 'usa' })), 'passed')
    assert.equal(evaluateRule(lock, facts({ mcc: '5411', merchant_country: 'CAN' })), 'declined')
    assert.equal(evaluateRule(lock, facts({ mcc: '5411', merchant_country: null })), 'declined')
    assert.equal(evaluateRule(lock, facts({ merchant_name: null })), 'declined')
    assert.equal(evaluateRule(lock, facts()), 'declined')
    assert.equal(evaluateRule({ ...lock, mode: 'shadow' }, facts()), 'would_decline')
  })
})

describe('several rules, and who they apply to', () => {
  const card: CardTarget = {
    id: 'card_A',
    account_id: 'acct_A',
    cardholder_id: 'chd_A',
    program_id: 'prog_A',
  }

  test('every rule is recorded in order, after a decline too; the first active decline names the decision', () => {
    const shadowLock = rule(
      'merchant_lock',
      { merchants: [{ name: 'nowhere' }] },
      'shadow',
      'arl_1',
    )
    const pass = rule(
      'condition',
      { conditions: [{ attribute: 'amount', operator: 'gt', value: 1e9 }] },
      'active',
      'arl_2',
    )
    const velocity = rule(
      'velocity_limit',
      { window: { type: 'week' }, aggregate: 'account', limit_count: 1 },
      'active',
      'arl_3',
    )
    const alsoDeclines = rule(
      'condition',
      { conditions: [{ attribute: 'amount', operator: 'gt', value: 0 }] },
      'active',
      'arl_4',
    )
    const { results, declinedBy } = evaluateRules(
      [shadowLock, pass, velocity, alsoDeclines],
      facts(),
      (r) => (r.id === 'arl_3' ? { used_amount: 0, used_count: 1 } : undefined),
    )
    assert.deepEqual(results, [
      { rule_id: 'arl_1', mode: 'shadow', outcome: 'would_decline' },
      { rule_id: 'arl_2', mode: 'active', outcome: 'passed' },
      { rule_id: 'arl_3', mode: 'active', outcome: 'declined' },
      { rule_id: 'arl_4', mode: 'active', outcome: 'declined' },
    ])
    assert.equal(declinedBy, 'arl_3')
    const shadowOnly = evaluateRules([shadowLock, pass], facts())
    assert.equal(shadowOnly.declinedBy, null, 'shadow rules never decline')
    assert.deepEqual(evaluateRules([], facts()), { results: [], declinedBy: null })
  })

  test('ruleDeclines answers the same for a rule whatever its mode', () => {
    const lock = rule('merchant_lock', { merchants: [{ mcc: '0001' }] }, 'shadow')
    assert.equal(ruleDeclines(lock, facts()), true)
  })

  test('a scope takes in the card through its level; an exclusion of the card, its account or its cardholder skips it', () => {
    const scope = (
      level: 'program' | 'account' | 'cardholder' | 'card',
      ids: string[],
      exclude_ids: string[] = [],
    ) => ({
      level,
      ids,
      exclude_ids,
    })
    assert.ok(scopeIncludes(scope('program', ['prog_B', 'prog_A']), card))
    assert.ok(!scopeIncludes(scope('program', ['prog_B']), card))
    assert.ok(scopeIncludes(scope('account', ['acct_A']), card))
    assert.ok(scopeIncludes(scope('cardholder', ['chd_A']), card))
    assert.ok(scopeIncludes(scope('card', ['card_A']), card))
    assert.ok(!scopeIncludes(scope('card', ['card_B']), card))
    assert.ok(
      !scopeIncludes(scope('account', ['chd_A']), card),
      'an id counts at its own level only',
    )
    assert.ok(!scopeIncludes(scope('program', ['prog_A'], ['card_A']), card))
    assert.ok(!scopeIncludes(scope('program', ['prog_A'], ['acct_A']), card))
    assert.ok(!scopeIncludes(scope('program', ['prog_A'], ['chd_A']), card))
    assert.ok(scopeIncludes(scope('program', ['prog_A'], ['card_B', 'acct_B']), card))
    assert.ok(!scopeIncludes(scope('cardholder', ['chd_A'], ['acct_A']), card))

    const rules = [
      { id: 'arl_1', status: 'enabled' as const, scope: scope('program', ['prog_A']) },
      { id: 'arl_2', status: 'disabled' as const, scope: scope('program', ['prog_A']) },
      { id: 'arl_3', status: 'enabled' as const, scope: scope('card', ['card_B']) },
      { id: 'arl_4', status: 'enabled' as const, scope: scope('account', ['acct_A'], ['card_A']) },
      { id: 'arl_5', status: 'enabled' as const, scope: scope('cardholder', ['chd_A']) },
    ]
    assert.deepEqual(
      rulesThatApply(rules, card).map((r) => r.id),
      ['arl_1', 'arl_5'],
    )
  })
})
