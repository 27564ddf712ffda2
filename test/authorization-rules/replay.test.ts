import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { readParameters } from '../../src/modules/authorization-rules/parameters.js'
import {
  type ReplayableRule,
  replayFrom,
  replayRule,
  RuleReplay,
  type StoredAuthorization,
} from '../../src/modules/authorization-rules/replay.js'
import type { RuleScope } from '../../src/modules/authorization-rules/rule.js'

const CARD_A = { id: 'card_A', account_id: 'acct_A', cardholder_id: 'chd_A', program_id: 'prog_1' }
const CARD_B = { id: 'card_B', account_id: 'acct_B', cardholder_id: 'chd_B', program_id: 'prog_1' }
const CARD_C = { id: 'card_C', account_id: 'acct_C', cardholder_id: 'chd_C', program_id: 'prog_2' }
const T0 = Date.parse('2026-11-04T10:00:00.000Z')
const min = (n: number) => new Date(T0 + n * 60_000)

let seq = 0
function auth(at: Date, over: Partial<StoredAuthorization> = {}): StoredAuthorization {
  seq++
  return {
    id: `auth_${String(seq).padStart(3, '0')}`,
    card: CARD_A,
    card_created_at: new Date(T0 - 86_400_000),
    created_at: at,
    approved: true,
    amount: 1_000,
    merchant_amount: 1_000,
    merchant_currency: 'USD',
    merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
    ...over,
  }
}

const PROGRAM_1: RuleScope = { level: 'program', ids: ['prog_1'], exclude_ids: [] }

function replayable(
  type: 'condition' | 'merchant_lock',
  parameters: unknown,
  scope = PROGRAM_1,
): ReplayableRule {
  return { scope, ...readParameters(type, parameters) } as ReplayableRule
}

const WINDOW = { from: min(0), to: min(120) }

describe('replaying a rule over stored authorizations', () => {
  test("counts each card's last hour from the stream itself, from before the window too; exactly an hour old has left it", () => {
    const rule = replayable('condition', {
      conditions: [{ attribute: 'authorization_count_1h', operator: 'gte', value: 2 }],
    })
    const stream = [
      auth(min(-50)), // before the window: counted for what follows, not evaluated
      auth(min(-30), { approved: false }), // declined: not an approved authorization
      auth(min(5)), // 1 approved in the last hour: passes
      auth(min(6), { card: CARD_B }), // another card's history
      auth(min(9)), // 2 approved (-50, 5): would decline
      auth(min(10), { card: CARD_B }), // card B has 1: passes
      auth(min(65)), // -50 and 5 have left; 9 is in: 1, passes
      auth(min(69)), // exactly an hour after 9: 9 has left; 65 is in: 1, passes
    ]
    const report = replayRule(rule, stream, WINDOW)
    assert.equal(report.evaluated_count, 6)
    assert.equal(report.would_decline_count, 1)
    assert.equal(report.approved_would_decline_count, 1)
    assert.deepEqual(
      report.examples.map((e) => e.authorization_id),
      [stream[4].id],
    )
  })

  test('declines in the last hour and the card age are what the decision would have read', () => {
    const rule = replayable('condition', {
      conditions: [
        { attribute: 'decline_count_1h', operator: 'gte', value: 1 },
        { attribute: 'card_age_seconds', operator: 'lt', value: 3_600 },
      ],
    })
    const young = new Date(min(0).getTime() - 10 * 60_000)
    const stream = [
      auth(min(1), { approved: false, card_created_at: young }),
      auth(min(2), { card_created_at: young }), // a decline in the hour, card 12 minutes old: would decline
      auth(min(80), { card_created_at: young }), // the decline has left the hour
    ]
    const report = replayRule(rule, stream, WINDOW)
    assert.equal(report.would_decline_count, 1)
    assert.equal(report.examples[0].authorization_id, stream[1].id)
  })

  test('only the window [from, to) on cards of the scope is evaluated; already declined ones count apart from the approved', () => {
    const rule = replayable('merchant_lock', { merchants: [{ mcc: '5411' }] })
    const stream = [
      auth(min(-1)), // before from
      auth(min(0)), // at from: evaluated, would decline
      auth(min(1), { approved: false }), // declined then, would decline too
      auth(min(2), { merchant: { name: 'Grocer', mcc: '5411', country: 'USA' } }), // let through
      auth(min(3), { card: CARD_C }), // outside the scope
      auth(min(119)), // evaluated
      auth(min(120)), // at to: not
    ]
    const report = replayRule(rule, stream, WINDOW)
    assert.equal(report.evaluated_count, 4)
    assert.equal(report.would_decline_count, 3)
    assert.equal(report.approved_would_decline_count, 2)
    assert.deepEqual(
      report.examples.map((e) => e.authorization_id),
      [stream[1].id, stream[5].id],
    )
    assert.deepEqual(report.examples[0], {
      authorization_id: stream[1].id,
      card_id: 'card_A',
      amount: 1_000,
      merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
      created_at: min(0),
    })
  })

  test('exclusions hold in a replay as in a decision; examples stop at the limit asked, the counts do not', () => {
    const scope: RuleScope = { level: 'program', ids: ['prog_1'], exclude_ids: ['chd_B'] }
    const rule = replayable('merchant_lock', { merchants: [{ name: 'nowhere' }] }, scope)
    const stream = Array.from({ length: 30 }, (_, i) =>
      auth(min(i), { card: i % 2 === 0 ? CARD_A : CARD_B }),
    )
    const report = replayRule(rule, stream, WINDOW, 3)
    assert.equal(report.evaluated_count, 15)
    assert.equal(report.approved_would_decline_count, 15)
    assert.equal(report.examples.length, 3)
    assert.ok(report.examples.every((e) => e.card_id === 'card_A'))
  })

  test('an empty stream reports nothing; a stream out of order is refused', () => {
    const rule = replayable('merchant_lock', { merchants: [{ mcc: '5411' }] })
    assert.deepEqual(replayRule(rule, [], WINDOW), {
      evaluated_count: 0,
      would_decline_count: 0,
      approved_would_decline_count: 0,
      approved_would_decline_amount: 0,
      examples: [],
    })
    assert.throws(() => replayRule(rule, [auth(min(5)), auth(min(4))], WINDOW), RangeError)
  })
})

function velocity(parameters: Record<string, unknown>, scope = PROGRAM_1): ReplayableRule {
  return {
    scope,
    ...readParameters('velocity_limit', {
      window: { type: 'day' },
      aggregate: 'card',
      ...parameters,
    }),
  } as ReplayableRule
}

describe('replaying a velocity limit', () => {
  test('a count: what the day approved before the window counts; one it would decline counts for nothing, nor does a decline', () => {
    const rule = velocity({ limit_count: 2 })
    const stream = [
      auth(min(-30)), // before the window, same day: counted
      auth(min(1), { approved: false }), // declined then: evaluated (passes), counts for nothing
      auth(min(2)), // 1 + 1 = 2: passes
      auth(min(3)), // 2 + 1 > 2: would decline, not counted
      auth(min(4), { card: CARD_B }), // another card's own count
      auth(min(5)), // still 2: would decline
    ]
    const report = replayRule(rule, stream, WINDOW)
    assert.equal(report.evaluated_count, 5)
    assert.equal(report.would_decline_count, 2)
    assert.equal(report.approved_would_decline_amount, 2000)
    assert.deepEqual(
      report.examples.map((e) => e.authorization_id),
      [stream[3].id, stream[5].id],
    )
  })

  test('spend changes move the bucket at their own time: a reversal frees, an increment adds; an account aggregate sums its cards', () => {
    const rule = velocity({ aggregate: 'account', limit_amount: 3000 })
    const cardA2 = { ...CARD_A, id: 'card_A2' }
    const stream = [
      auth(min(0), { amount: 2000, spend_changes: [{ at: min(10), amount: -2000 }] }),
      auth(min(5), { card: cardA2, amount: 1500 }), // 2000 + 1500 > 3000: would decline
      auth(min(10), { card: cardA2, amount: 2500 }), // the reversal at 10 came first: passes
      auth(min(11), { amount: 400, spend_changes: [{ at: min(12), amount: 100 }] }), // 2900
      auth(min(13), { amount: 1 }), // 3000 + 1: would decline
    ]
    const report = replayRule(rule, stream, WINDOW)
    assert.deepEqual(
      report.examples.map((e) => e.authorization_id),
      [stream[1].id, stream[4].id],
    )
  })

  test('a calendar window starts again at 00:00 UTC; a rolling one lets spend go once its bucket has left', () => {
    const day = velocity({ limit_count: 1 })
    const midnight = Date.parse('2026-11-05T00:00:00.000Z')
    const at = (ms: number) => new Date(midnight + ms)
    const dayStream = [auth(at(-60_000)), auth(at(-30_000)), auth(at(0))]
    const dayWindow = { from: at(-120_000), to: at(60_000) }
    assert.deepEqual(
      replayRule(day, dayStream, dayWindow).examples.map((e) => e.authorization_id),
      [dayStream[1].id],
    )
    const rolling = velocity({ window: { type: 'rolling', seconds: 600 }, limit_count: 1 })
    const rollingStream = [auth(min(0)), auth(min(5)), auth(min(11))] // buckets of 10 s: min(0) has left at 10:10
    assert.deepEqual(
      replayRule(rolling, rollingStream, WINDOW).examples.map((e) => e.authorization_id),
      [rollingStream[1].id],
    )
  })

  test('where the stream starts: an hour before for a condition, the window current at from for a limit, all history for all_time', () => {
    const from = new Date('2026-11-04T10:00:00.000Z')
    const lock = replayable('merchant_lock', { merchants: [{ mcc: '5411' }] })
    assert.deepEqual(replayFrom(lock, from), new Date('2026-11-04T09:00:00.000Z'))
    assert.deepEqual(
      replayFrom(velocity({ limit_count: 1 }), from),
      new Date('2026-11-04T00:00:00.000Z'),
    )
    assert.deepEqual(
      replayFrom(velocity({ window: { type: 'month' }, limit_count: 1 }), from),
      new Date('2026-11-01T00:00:00.000Z'),
    )
    assert.deepEqual(
      replayFrom(velocity({ window: { type: 'rolling', seconds: 600 }, limit_count: 1 }), from),
      new Date('2026-11-04T09:50:00.000Z'),
    )
    assert.equal(replayFrom(velocity({ window: { type: 'all_time' }, limit_count: 1 }), from), null)
  })

  test('fed page by page it reports what it reports at once', () => {
    const rule = velocity({ limit_count: 3 })
    const stream = Array.from({ length: 20 }, (_, i) => auth(min(i)))
    const replay = new RuleReplay(rule, WINDOW)
    for (let i = 0; i < stream.length; i += 6) replay.add(stream.slice(i, i + 6))
    assert.deepEqual(replay.report(), replayRule(rule, stream, WINDOW))
    assert.equal(replay.report().approved_would_decline_count, 17)
  })
})
