import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import {
  decide,
  windowsNeeded,
  windowStart,
  type DecisionInput,
} from '../../src/modules/authorizations/decide.js'

const NOW = new Date('2026-03-18T15:30:00Z') // a Wednesday

function input(
  overrides: Partial<DecisionInput> = {},
  controls: Partial<DecisionInput['card']['controls']> = {},
): DecisionInput {
  return {
    amount: 1000,
    currency: 'usd',
    merchant: { mcc: '5814', country: 'USA' },
    card: {
      status: 'active',
      expMonth: 3,
      expYear: 2029,
      controls: {
        spending_limits: [],
        allowed_mccs: [],
        blocked_mccs: [],
        allowed_countries: [],
        blocked_countries: [],
        ...controls,
      },
    },
    account: { status: 'open', currency: 'USD', available: 5000 },
    tokenStatus: null,
    expiryMatches: null,
    cvcMatches: null,
    spent: {},
    alreadyAuthorized: 0,
    now: NOW,
    ...overrides,
  }
}

const reason = (i: DecisionInput) => {
  const d = decide(i)
  return d.approved ? 'approved' : d.reason
}

describe('decide', () => {
  test('an active card with funds and no rules is approved', () => {
    assert.deepEqual(decide(input()), { approved: true })
  })

  test('card status declines: pending and inactive are card_inactive, then frozen, closed, expired', () => {
    const card = (status: string) => ({ ...input().card, status })
    assert.equal(reason(input({ card: card('pending') })), 'card_inactive')
    assert.equal(reason(input({ card: card('inactive') })), 'card_inactive')
    assert.equal(reason(input({ card: card('frozen') })), 'card_frozen')
    assert.equal(reason(input({ card: card('closed') })), 'card_closed')
    assert.equal(reason(input({ card: card('expired') })), 'card_expired')
  })

  test('a card past the last day of its expiry month is card_expired even before the expiry job ran', () => {
    const card = { ...input().card, expMonth: 2, expYear: 2026 }
    assert.equal(reason(input({ card })), 'card_expired')
    assert.equal(
      reason(input({ card: { ...card, expMonth: 3 } })),
      'approved',
      'valid through the end of March',
    )
  })

  test('presented expiry and security code: a mismatch declines invalid_expiry, then invalid_cvc', () => {
    assert.equal(reason(input({ expiryMatches: false, cvcMatches: false })), 'invalid_expiry')
    assert.equal(reason(input({ expiryMatches: true, cvcMatches: false })), 'invalid_cvc')
    assert.equal(reason(input({ expiryMatches: true, cvcMatches: true })), 'approved')
  })

  test('a token other than active declines token_inactive; no token is fine', () => {
    for (const s of ['requested', 'suspended', 'deleted'])
      assert.equal(reason(input({ tokenStatus: s })), 'token_inactive')
    assert.equal(reason(input({ tokenStatus: 'active' })), 'approved')
  })

  test('account blocked, then currency mismatch', () => {
    assert.equal(
      reason(
        input({
          account: { status: 'blocked', currency: 'USD', available: 5000 },
          currency: 'EUR',
        }),
      ),
      'account_blocked',
    )
    assert.equal(reason(input({ currency: 'EUR' })), 'currency_mismatch')
  })

  test('merchant category rules: blocked list, or not on the allowed list (an unknown category is not allowed)', () => {
    assert.equal(reason(input({}, { blocked_mccs: ['5814'] })), 'mcc_blocked')
    assert.equal(reason(input({}, { allowed_mccs: ['5411'] })), 'mcc_blocked')
    assert.equal(reason(input({}, { allowed_mccs: ['5411', '5814'] })), 'approved')
    assert.equal(
      reason(input({ merchant: { mcc: null, country: 'USA' } }, { allowed_mccs: ['5411'] })),
      'mcc_blocked',
    )
    assert.equal(
      reason(input({ merchant: { mcc: null, country: 'USA' } }, { blocked_mccs: ['5411'] })),
      'approved',
    )
  })

  test('country rules: blocked list or outside the allowed list declines country_blocked', () => {
    assert.equal(reason(input({}, { blocked_countries: ['USA'] })), 'country_blocked')
    assert.equal(reason(input({}, { allowed_countries: ['GBR'] })), 'country_blocked')
    assert.equal(reason(input({}, { allowed_countries: ['USA'] })), 'approved')
  })

  test('per_authorization limit counts the whole authorization, increments included', () => {
    const limits = { spending_limits: [{ amount: 1000, interval: 'per_authorization' }] }
    assert.equal(reason(input({ amount: 1000 }, limits)), 'approved')
    assert.equal(reason(input({ amount: 1001 }, limits)), 'spending_limit')
    assert.equal(reason(input({ amount: 200, alreadyAuthorized: 900 }, limits)), 'spending_limit')
  })

  test('windowed limits add this request to what the window already spent', () => {
    const limits = {
      spending_limits: [
        { amount: 3000, interval: 'daily' },
        { amount: 10_000, interval: 'monthly' },
      ],
    }
    assert.equal(
      reason(input({ amount: 1000, spent: { daily: 2000, monthly: 2000 } }, limits)),
      'approved',
    )
    assert.equal(
      reason(input({ amount: 1001, spent: { daily: 2000, monthly: 2000 } }, limits)),
      'spending_limit',
    )
    assert.equal(
      reason(input({ amount: 1000, spent: { daily: 0, monthly: 9500 } }, limits)),
      'spending_limit',
    )
    assert.equal(
      reason(
        input(
          { amount: 10, spent: { all_time: 50 } },
          { spending_limits: [{ amount: 59, interval: 'all_time' }] },
        ),
      ),
      'spending_limit',
    )
  })

  test('insufficient_funds is the last check: the available balance must cover the amount exactly or more', () => {
    assert.equal(reason(input({ amount: 5000 })), 'approved')
    assert.equal(reason(input({ amount: 5001 })), 'insufficient_funds')
    assert.equal(reason(input({ amount: 5001 }, { blocked_mccs: ['5814'] })), 'mcc_blocked')
  })

  test('windows: only the intervals the limits use are read; they start at UTC midnight, Monday and the 1st', () => {
    assert.deepEqual(
      windowsNeeded(
        input(
          {},
          {
            spending_limits: [
              { amount: 1, interval: 'per_authorization' },
              { amount: 1, interval: 'weekly' },
            ],
          },
        ).card.controls,
      ),
      ['weekly'],
    )
    assert.equal(windowStart('daily', NOW)?.toISOString(), '2026-03-18T00:00:00.000Z')
    assert.equal(windowStart('weekly', NOW)?.toISOString(), '2026-03-16T00:00:00.000Z')
    assert.equal(
      windowStart('weekly', new Date('2026-03-22T23:59:59Z'))?.toISOString(),
      '2026-03-16T00:00:00.000Z',
      'Sunday belongs to the week that began Monday',
    )
    assert.equal(
      windowStart('weekly', new Date('2026-03-01T10:00:00Z'))?.toISOString(),
      '2026-02-23T00:00:00.000Z',
      'across a month boundary',
    )
    assert.equal(windowStart('monthly', NOW)?.toISOString(), '2026-03-01T00:00:00.000Z')
    assert.equal(windowStart('all_time', NOW), null)
  })
  test("authorization rules run after the card's own controls and before the balance: they only decline more", () => {
    const facts = {
      mcc: '5814',
      merchant_country: 'USA',
      merchant_currency: 'USD',
      merchant_name: 'Corner Cafe',
      amount: 1000,
      merchant_amount: 1000,
      card_age_seconds: 86_400,
      authorization_count_1h: 0,
      decline_count_1h: 0,
    }
    const rule = (id: string, mode: 'active' | 'shadow', value: number) => ({
      id,
      mode,
      type: 'condition' as const,
      parameters: {
        conditions: [{ attribute: 'amount' as const, operator: 'gte' as const, value }],
      },
    })
    const rules = { rules: [rule('arl_a', 'shadow', 1), rule('arl_b', 'active', 1)], facts }
    assert.deepEqual(decide(input({ rules })), {
      approved: false,
      reason: 'rule_declined',
      ruleId: 'arl_b',
      rules: [
        { rule_id: 'arl_a', mode: 'shadow', outcome: 'would_decline' },
        { rule_id: 'arl_b', mode: 'active', outcome: 'declined' },
      ],
    })
    // The card's controls decline first, and the rules are not reached.
    assert.deepEqual(decide(input({ rules }, { blocked_mccs: ['5814'] })), {
      approved: false,
      reason: 'mcc_blocked',
    })
    const passing = { rules: [rule('arl_c', 'active', 5000)], facts }
    assert.deepEqual(decide(input({ rules: passing })), {
      approved: true,
      rules: [{ rule_id: 'arl_c', mode: 'active', outcome: 'passed' }],
    })
    // Passed, then the balance: insufficient_funds keeps what the rules said.
    assert.deepEqual(
      decide(
        input({ rules: passing, account: { status: 'open', currency: 'USD', available: 10 } }),
      ),
      {
        approved: false,
        reason: 'insufficient_funds',
        rules: [{ rule_id: 'arl_c', mode: 'active', outcome: 'passed' }],
      },
    )
    // No rule applies: nothing is recorded.
    assert.deepEqual(decide(input({ rules: { rules: [], facts } })), { approved: true })
  })
})
