/**
 * Backtests (docs/authorization-rules.md, "Backtests"): `POST /v1/authorization_rules/{id}/backtests {from, to}`
 * answers 202 pending; the job replays the stored authorizations of the window through the authorizations module's
 * reader, velocity limits included, and records what the rule would have declined, with
 * `authorization_rule.backtest_completed`.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { eventsFor, expectError } from '../helpers/api.js'
import { withTenant } from '../helpers/tenant.js'
import {
  expectApproved,
  expectDecline,
  fundedCard,
  post,
  runJobs,
  secondCard,
} from '../authorizations/support.js'
import { STORED_AUTHORIZATIONS } from '../../src/modules/authorization-rules/index.js'
import { condition, createRule, onCard } from './support.js'

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

const backtestsOf = (ruleId: string) => `/v1/authorization_rules/${ruleId}/backtests`

/** Asks for a backtest of the last `ms` up to now (202, pending), runs the jobs, and answers it as GET does. */
async function backtest(ruleId: string, from: Date, to = new Date(t.clock.now().getTime() + 1000)) {
  const res = await t.api(token, 'POST', backtestsOf(ruleId), {
    from: from.toISOString(),
    to: to.toISOString(),
  })
  assert.equal(res.statusCode, 202, res.body)
  const asked = res.json()
  assert.match(asked.id, /^arb_/)
  assert.equal(asked.status, 'pending')
  assert.equal(asked.results, null)
  await runJobs(t)
  const got = await t.api(token, 'GET', `${backtestsOf(ruleId)}/${asked.id}`)
  assert.equal(got.statusCode, 200, got.body)
  return { asked, done: got.json() }
}

test('a count of 2 a day: the 3rd and later approved authorizations of the day would decline; another card and declines count for nothing', async () => {
  token = await nextDay()
  const start = t.clock.now()
  const f = await fundedCard(t, tenant, token, 100_000)
  const other = await secondCard(t, token, f)
  const a1 = await expectApproved(t, token, f.card.id, 1000)
  await expectDecline(t, token, f.card.id, 1_000_000, 'insufficient_funds')
  await expectApproved(t, token, other.id, 500)
  const a2 = await expectApproved(t, token, f.card.id, 2000)
  const a3 = await expectApproved(t, token, f.card.id, 3000)
  const a4 = await expectApproved(t, token, f.card.id, 4000)
  // Made after the authorizations: the live decisions never saw it.
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', limit_count: 2 },
  })
  const { asked, done } = await backtest(rule.id, start)
  assert.deepEqual(
    { ...done, results: null, status: 'pending', completed_at: null },
    { ...asked, failure_reason: null },
  )
  assert.equal(done.object, 'authorization_rule_backtest')
  assert.equal(done.rule_id, rule.id)
  assert.equal(done.status, 'completed')
  assert.ok(done.completed_at)
  const { examples, ...counts } = done.results
  assert.deepEqual(counts, {
    evaluated: 5, // a1, the decline, a2, a3, a4 (the other card is not in the scope)
    would_decline: 2,
    approved_would_decline: 2,
    declined_amount: 7000,
  })
  assert.deepEqual(
    examples.map((e: any) => [e.authorization_id, e.card_id, e.amount]),
    [
      [a3.id, f.card.id, 3000],
      [a4.id, f.card.id, 4000],
    ],
  )
  assert.deepEqual(examples[0].merchant, {
    name: a3.merchant.name,
    mcc: a3.merchant.mcc,
    country: a3.merchant.country,
  })
  assert.equal(examples[0].created_at, a3.created_at)
  assert.ok(a1 && a2)

  // The event carries what GET answers, once.
  const events = await eventsFor(t, done.id, 'authorization_rule.backtest_completed')
  assert.equal(events.length, 1)
  assert.deepEqual(events[0].data.object, done)
  // The list, newest first.
  const list = await t.api(token, 'GET', backtestsOf(rule.id))
  assert.equal(list.statusCode, 200, list.body)
  assert.deepEqual(
    list.json().data.map((b: any) => b.id),
    [done.id],
  )
})

test('an amount limit replays reversals in time order: what a reversal freed is spent again', async () => {
  token = await nextDay()
  const start = t.clock.now()
  const f = await fundedCard(t, tenant, token, 100_000)
  const first = await expectApproved(t, token, f.card.id, 3000)
  await post(t, token, `/v1/simulate/authorizations/${first.id}/reverse`, {})
  const second = await expectApproved(t, token, f.card.id, 3000)
  // Captured for less, closing: the rest is freed at the capture.
  await post(t, token, `/v1/simulate/authorizations/${second.id}/capture`, { amount: 1000 }, 201)
  const third = await expectApproved(t, token, f.card.id, 4000) // 1000 + 4000: lands on the limit
  const fourth = await expectApproved(t, token, f.card.id, 1) // past it
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', limit_amount: 5000 },
  })
  const { done } = await backtest(rule.id, start)
  assert.equal(done.results.evaluated, 4)
  assert.deepEqual(
    done.results.examples.map((e: any) => e.authorization_id),
    [fourth.id],
  )
  assert.ok(third)

  // The window starts inside the day: what the day counted before it still counts (read from the day's start).
  const late = await backtest(rule.id, new Date(new Date(third.created_at).getTime()))
  assert.equal(late.done.results.evaluated, 2)
  assert.deepEqual(
    late.done.results.examples.map((e: any) => e.authorization_id),
    [fourth.id],
  )
})

test('a condition rule replays too; a window with nothing reports zeros', async () => {
  token = await nextDay()
  const start = t.clock.now()
  const f = await fundedCard(t, tenant, token, 100_000)
  await expectApproved(t, token, f.card.id, 100)
  const big = await expectApproved(t, token, f.card.id, 9000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['amount', 'gt', 5000]),
    mode: 'shadow',
  })
  const { done } = await backtest(rule.id, start)
  assert.deepEqual(
    done.results.examples.map((e: any) => e.authorization_id),
    [big.id],
  )
  assert.equal(done.results.evaluated, 2)
  const empty = await backtest(
    rule.id,
    new Date(start.getTime() - 10 * DAY_MS),
    new Date(start.getTime() - 9 * DAY_MS),
  )
  assert.deepEqual(empty.done.results, {
    evaluated: 0,
    would_decline: 0,
    approved_would_decline: 0,
    declined_amount: 0,
    examples: [],
  })
})

test('bad windows answer 400 naming the field; unknown rules and backtests 404', async () => {
  const f = await fundedCard(t, tenant, token, 0)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['amount', 'gt', 1]),
  })
  const ask = (body: unknown, id = rule.id) => t.api(token, 'POST', backtestsOf(id), body)
  expectError(
    await ask({ from: 'yesterday', to: '2026-11-02T00:00:00Z' }),
    400,
    'invalid_parameter',
    'from',
  )
  expectError(
    await ask({ from: '2026-11-01T00:00:00Z', to: '2026-11-01' }),
    400,
    'invalid_parameter',
    'to',
  )
  expectError(
    await ask({ from: '2026-11-02T00:00:00Z', to: '2026-11-02T00:00:00Z' }),
    400,
    'invalid_parameter',
    'to',
  )
  expectError(
    await ask({ from: '2026-11-03T00:00:00Z', to: '2026-11-02T00:00:00Z' }),
    400,
    'invalid_parameter',
    'to',
  )
  expectError(
    await ask({ from: '2025-01-01T00:00:00Z', to: '2026-01-03T00:00:00Z' }),
    400,
    'invalid_parameter',
    'to',
  )
  expectError(await ask({ to: '2026-11-02T00:00:00Z' }), 400, 'missing_parameter', 'from')
  const ok = await ask({ from: '2025-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }) // 366 days
  assert.equal(ok.statusCode, 202, ok.body)
  const window = { from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z' }
  expectError(
    await ask(window, 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X'),
    404,
    'authorization_rule_not_found',
  )

  // Another rule's backtest, another organization's, and unknown ids.
  const another = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['amount', 'gt', 2]),
  })
  const theirs = ok.json().id
  expectError(
    await t.api(token, 'GET', `${backtestsOf(another.id)}/${theirs}`),
    404,
    'authorization_rule_backtest_not_found',
  )
  for (const id of ['arb_nope', 'arb_01JD3T2V4W6X8Y0Z2A4B6C8D0E'])
    expectError(
      await t.api(token, 'GET', `${backtestsOf(rule.id)}/${id}`),
      404,
      'authorization_rule_backtest_not_found',
    )
  const stranger = await createTenant(t)
  const strangerToken = await stranger.token()
  expectError(
    await t.api(strangerToken, 'GET', `${backtestsOf(rule.id)}/${theirs}`),
    404,
    'authorization_rule_not_found',
  )
  expectError(
    await t.api(strangerToken, 'POST', backtestsOf(rule.id), window),
    404,
    'authorization_rule_not_found',
  )
})

test("the authorizations module's reader pages the window oldest first, each with its card and its later spend", async () => {
  token = await nextDay()
  const f = await fundedCard(t, tenant, token, 100_000)
  const start = t.clock.now()
  const a = await expectApproved(t, token, f.card.id, 1000)
  await post(t, token, `/v1/simulate/authorizations/${a.id}/increment`, { amount: 500 })
  await post(t, token, `/v1/simulate/authorizations/${a.id}/reverse`, { amount: 300 })
  const b = await expectApproved(t, token, f.card.id, 2000)
  const c = await expectApproved(t, token, f.card.id, 3000)
  const read = t.deps.hooks.get(STORED_AUTHORIZATIONS)
  const scope = { organizationId: tenant.organizationId, environment: 'sandbox' as const }
  const window = { from: start, to: new Date(t.clock.now().getTime() + 1000) }
  const first = await read(t.deps.db, scope, window, null, 2)
  const second = await read(t.deps.db, scope, window, first[1]!.id, 2)
  assert.deepEqual(
    [...first, ...second].map((x) => x.id),
    [a.id, b.id, c.id],
  )
  const [stored] = first
  assert.deepEqual(stored!.card, {
    id: f.card.id,
    account_id: f.account.id,
    cardholder_id: f.holder.id,
    program_id: f.card.program_id,
  })
  // Its first request; then the increment adds, and the partial reversal frees at its last change.
  assert.equal(stored!.amount, 1000)
  assert.deepEqual(
    stored!.spend_changes!.map((change) => change.amount),
    [500, -300],
  )
  // Another organization reads nothing of it.
  const stranger = await createTenant(t)
  assert.deepEqual(
    await read(t.deps.db, { ...scope, organizationId: stranger.organizationId }, window, null, 10),
    [],
  )
})
