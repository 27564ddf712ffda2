/**
 * `GET /v1/cards/{id}/spend_limits` (docs/cards.md, "What is left of each limit"): the card's own spending controls and
 * the enabled velocity limits of the rules that apply to it, with what is used (the numbers the decision compares
 * with), what is left and when it resets.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { expectError } from '../helpers/api.js'
import { withTenant } from '../helpers/tenant.js'
import {
  expectApproved,
  expectDecline,
  fundedCard,
  post,
  secondCard,
} from '../authorizations/support.js'
import { condition, createRule, onCard, patchRule } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const DAY_MS = 24 * 60 * 60 * 1000

/** Moves the clock to a minute after the start of the next UTC day, and hands back a fresh token. */
async function nextDay(): Promise<string> {
  const now = t.clock.now().getTime()
  t.clock.advance(Math.ceil(now / DAY_MS) * DAY_MS + 60_000 - now)
  return tenant.token()
}

const nextMidnight = () =>
  new Date(Math.ceil(t.clock.now().getTime() / DAY_MS) * DAY_MS).toISOString()

async function spendLimits(cardId: string, tok = token): Promise<any[]> {
  const res = await t.api(tok, 'GET', `/v1/cards/${cardId}/spend_limits`)
  assert.equal(res.statusCode, 200, res.body)
  const body = res.json()
  assert.equal(body.object, 'list')
  return body.data
}

test("the card's controls, then the rules' velocity limits (active and shadow) in id order, with what is used, left and when it resets", async () => {
  token = await nextDay()
  const f = await fundedCard(t, tenant, token, 1_000_000, {
    spending_controls: {
      spending_limits: [
        { amount: 10_000, interval: 'daily' },
        { amount: 5000, interval: 'per_authorization' },
      ],
    },
  })
  const other = await secondCard(t, token, f)
  const daily = await createRule(t, token, {
    name: 'Two a day',
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', limit_count: 2 },
  })
  const hourly = await createRule(t, token, {
    name: '200.00 an hour on the account',
    scope: { level: 'account', ids: [f.account.id] },
    type: 'velocity_limit',
    parameters: {
      window: { type: 'rolling', seconds: 3600 },
      aggregate: 'account',
      limit_amount: 20_000,
    },
    mode: 'shadow',
  })
  // Not listed: a condition, a disabled limit, a limit excluding the card, a deleted one.
  await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['amount', 'gt', 1_000_000]),
  })
  const disabled = await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'week' }, aggregate: 'card', limit_amount: 1 },
  })
  await patchRule(t, token, disabled.id, { status: 'disabled' })
  await createRule(t, token, {
    scope: { level: 'account', ids: [f.account.id], exclude_ids: [f.card.id] },
    type: 'velocity_limit',
    parameters: { window: { type: 'month' }, aggregate: 'card', limit_amount: 1_000_000 },
  })
  const deleted = await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'year' }, aggregate: 'card', limit_amount: 1_000_000 },
  })
  assert.equal(
    (await t.api(token, 'DELETE', `/v1/authorization_rules/${deleted.id}`)).statusCode,
    200,
  )

  const first = await expectApproved(t, token, f.card.id, 3000)
  await expectApproved(t, token, f.card.id, 2000)
  await post(t, token, `/v1/simulate/authorizations/${first.id}/reverse`, { amount: 1000 })
  await expectApproved(t, token, other.id, 1500)

  const limits = await spendLimits(f.card.id)
  const minute = Math.floor(new Date(first.created_at).getTime() / 60_000) * 60_000
  assert.deepEqual(limits, [
    {
      source: { type: 'card_control', interval: 'daily', rule_id: null, name: null, mode: null },
      window: { type: 'day', seconds: null },
      aggregate: 'card',
      currency: 'USD',
      limit_amount: 10_000,
      used_amount: 4000,
      remaining_amount: 6000,
      limit_count: null,
      used_count: null,
      remaining_count: null,
      resets_at: nextMidnight(),
    },
    {
      source: {
        type: 'card_control',
        interval: 'per_authorization',
        rule_id: null,
        name: null,
        mode: null,
      },
      window: { type: 'per_authorization', seconds: null },
      aggregate: 'card',
      currency: 'USD',
      limit_amount: 5000,
      used_amount: null,
      remaining_amount: 5000,
      limit_count: null,
      used_count: null,
      remaining_count: null,
      resets_at: null,
    },
    {
      source: {
        type: 'authorization_rule',
        interval: null,
        rule_id: daily.id,
        name: 'Two a day',
        mode: 'active',
      },
      window: { type: 'day', seconds: null },
      aggregate: 'card',
      currency: 'USD',
      limit_amount: null,
      used_amount: 4000,
      remaining_amount: null,
      limit_count: 2,
      used_count: 2,
      remaining_count: 0,
      resets_at: nextMidnight(),
    },
    {
      source: {
        type: 'authorization_rule',
        interval: null,
        rule_id: hourly.id,
        name: '200.00 an hour on the account',
        mode: 'shadow',
      },
      window: { type: 'rolling', seconds: 3600 },
      aggregate: 'account',
      currency: 'USD',
      limit_amount: 20_000,
      used_amount: 5500,
      remaining_amount: 14_500,
      limit_count: null,
      used_count: 3,
      remaining_count: null,
      // The oldest counted minute leaves the hour a minute after its start plus the hour.
      resets_at: new Date(minute + 60_000 + 3_600_000).toISOString(),
    },
  ])
  // What is answered is what the decision compares with: the count is used up.
  const declined = await expectDecline(t, token, f.card.id, 100, 'rule_declined')
  assert.equal(declined.rule_id, daily.id)

  // The next UTC day: calendar windows are empty again; the rolling hour has let everything go.
  token = await nextDay()
  const tomorrow = await spendLimits(f.card.id)
  assert.deepEqual(
    tomorrow.map((l) => [l.used_amount, l.used_count, l.remaining_amount, l.resets_at]),
    [
      [0, null, 10_000, nextMidnight()],
      [null, null, 5000, null],
      [0, 0, null, nextMidnight()],
      [0, 0, 20_000, null],
    ],
  )
})

test('a card with no limit answers an empty list; a week resets on Monday and all_time never', async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  assert.deepEqual(await spendLimits(f.card.id), [])
  await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'week' }, aggregate: 'cardholder', limit_amount: 500 },
  })
  await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'all_time' }, aggregate: 'card', limit_count: 9 },
  })
  await expectApproved(t, token, f.card.id, 200)
  const [week, ever] = await spendLimits(f.card.id)
  const now = t.clock.now()
  const monday = new Date(
    Date.UTC(
      now.getUTCFullYear(),
      now.getUTCMonth(),
      now.getUTCDate() + 7 - ((now.getUTCDay() + 6) % 7),
    ),
  )
  assert.equal(new Date(week.resets_at).getUTCDay(), 1)
  assert.equal(week.resets_at, monday.toISOString())
  assert.deepEqual([week.used_amount, week.remaining_amount], [200, 300])
  assert.deepEqual([ever.used_count, ever.remaining_count, ever.resets_at], [1, 8, null])
})

test("another organization's card, a malformed id and an unknown one answer 404 card_not_found", async () => {
  const stranger = await createTenant(t)
  const strangerToken = await stranger.token()
  const theirs = await fundedCard(t, stranger, strangerToken, 0)
  for (const id of [theirs.card.id, 'card_nope', 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M'])
    expectError(await t.api(token, 'GET', `/v1/cards/${id}/spend_limits`), 404, 'card_not_found')
})
