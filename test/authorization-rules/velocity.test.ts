/**
 * Velocity limits in the decision (docs/authorization-rules.md, "Counters"): what they count is an approved
 * authorization's spend (held plus captured: a reversal, an expiry or a smaller capture frees, an increment or a larger
 * capture adds) and its count; they read and write per-rule counters, never the card's history; windows roll.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import {
  expectApproved,
  expectDecline,
  fundedCard,
  post,
  secondCard,
} from '../authorizations/support.js'
import { cardBody, issuedCard, makeAccount } from '../cards/support.js'
import { createRule, onCard, patchRule } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const DAY_MS = 24 * 60 * 60 * 1000

function velocity(parameters: Record<string, unknown>): Record<string, unknown> {
  return {
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', ...parameters },
  }
}

async function counterRows(ruleId: string) {
  return t.deps.db
    .selectFrom('authorization_rule_counters')
    .selectAll()
    .where('rule_id', '=', ruleId)
    .orderBy('key')
    .execute()
}

/** The amount and count a rule's counters hold in all. */
async function counted(ruleId: string): Promise<[number, number]> {
  let amount = 0
  let count = 0
  for (const row of await counterRows(ruleId))
    for (const [a, n] of Object.values(row.buckets)) {
      amount += Number(a)
      count += Number(n)
    }
  return [amount, count]
}

/** Moves the clock to `ms` after the start of the next UTC day, and hands back a fresh token. */
async function nextDay(ms = 60_000): Promise<string> {
  const now = t.clock.now().getTime()
  t.clock.advance(Math.ceil(now / DAY_MS) * DAY_MS + ms - now)
  return tenant.token()
}

test('a daily amount limit: a request landing exactly on it passes, one past it declines naming the rule; a reversal, an expiry and a smaller capture free what they release', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...velocity({ limit_amount: 10_000 }),
  })
  const a = await expectApproved(t, token, f.card.id, 6000)
  assert.deepEqual(a.rule_results, [{ rule_id: rule.id, mode: 'active', outcome: 'passed' }])
  const b = await expectApproved(t, token, f.card.id, 4000)
  const over = await expectDecline(t, token, f.card.id, 1, 'rule_declined')
  assert.equal(over.rule_id, rule.id)
  assert.deepEqual(await counted(rule.id), [10_000, 2])

  // A partial reversal frees what it releases.
  await post(t, token, `/v1/simulate/authorizations/${a.id}/reverse`, { amount: 1000 })
  assert.deepEqual(await counted(rule.id), [9000, 2])
  await expectApproved(t, token, f.card.id, 1000)
  await expectDecline(t, token, f.card.id, 1, 'rule_declined')
  // A capture of less than is held, closing: the rest is freed.
  const captured = await post(
    t,
    token,
    `/v1/simulate/authorizations/${b.id}/capture`,
    { amount: 2500 },
    201,
  )
  assert.equal(captured.amount, 2500)
  assert.deepEqual(await counted(rule.id), [8500, 3])
  // An expiry frees what is still held.
  await post(t, token, `/v1/simulate/authorizations/${a.id}/expire`)
  assert.deepEqual(await counted(rule.id), [3500, 3])
  await expectApproved(t, token, f.card.id, 6500)
  await expectDecline(t, token, f.card.id, 1, 'rule_declined')
})

test('an increment is limited by its increase and adds it; a capture above the hold adds the excess; declines count for nothing', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...velocity({ limit_amount: 10_000, limit_count: 3 }),
  })
  const auth = await expectApproved(t, token, f.card.id, 5000)
  const url = `/v1/simulate/authorizations/${auth.id}`
  const raised = await post(t, token, `${url}/increment`, { amount: 4000 })
  assert.equal(raised.amount, 9000)
  const refused = await post(t, token, `${url}/increment`, { amount: 1001 })
  assert.equal(refused.amount, 9000)
  assert.equal(refused.request_history[2].decline_reason, 'rule_declined')
  assert.equal(refused.request_history[2].rule_id, rule.id)
  // An increment adds no count: the one authorization is still one.
  assert.deepEqual(await counted(rule.id), [9000, 1])
  await expectDecline(t, token, f.card.id, 1001, 'rule_declined')
  assert.deepEqual(await counted(rule.id), [9000, 1])
  // Captured above the hold: the excess counts.
  await post(t, token, `${url}/capture`, { amount: 9500 }, 201)
  assert.deepEqual(await counted(rule.id), [9500, 1])
  await expectApproved(t, token, f.card.id, 100)
  await expectApproved(t, token, f.card.id, 100)
  // The count limit: three approved authorizations.
  const fourth = await expectDecline(t, token, f.card.id, 1, 'rule_declined')
  assert.equal(fourth.rule_id, rule.id)
})

test('filters: only what they let through counts and is limited', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...velocity({ limit_amount: 5000, filters: { include_mccs: ['7995'] } }),
  })
  const casino = { merchant: { name: 'Casino', mcc: '7995', country: 'USA' } }
  await expectApproved(t, token, f.card.id, 5000, casino)
  const other = await expectApproved(t, token, f.card.id, 50_000)
  assert.deepEqual(other.rule_results, [{ rule_id: rule.id, mode: 'active', outcome: 'passed' }])
  await expectDecline(t, token, f.card.id, 1, 'rule_declined', casino)
  assert.deepEqual(await counted(rule.id), [5000, 1])
})

test("aggregates: an account's cards share its counter, a cardholder's accounts share theirs", async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const sibling = await secondCard(t, token, f)
  const perAccount = await createRule(t, token, {
    scope: { level: 'account', ids: [f.account.id] },
    ...velocity({ aggregate: 'account', limit_count: 3 }),
  })
  await expectApproved(t, token, f.card.id, 100)
  await expectApproved(t, token, sibling.id, 100)
  await expectApproved(t, token, f.card.id, 100)
  const declined = await expectDecline(t, token, sibling.id, 100, 'rule_declined')
  assert.equal(declined.rule_id, perAccount.id)
  await patchRule(t, token, perAccount.id, { status: 'disabled' })

  // A second account of the same cardholder, with its own card.
  const account2 = await makeAccount(t, token, tenant.programs.full.id, f.holder.id)
  await post(t, token, `/v1/accounts/${account2.id}/credit`, { amount: 1_000_000 })
  const card2 = await issuedCard(t, token, cardBody(f.holder.id, account2.id))
  const perHolder = await createRule(t, token, {
    scope: { level: 'cardholder', ids: [f.holder.id] },
    ...velocity({ aggregate: 'cardholder', window: { type: 'week' }, limit_amount: 1000 }),
  })
  await expectApproved(t, token, f.card.id, 400)
  await expectApproved(t, token, card2.id, 600)
  await expectDecline(t, token, sibling.id, 1, 'rule_declined')
  await expectDecline(t, token, card2.id, 1, 'rule_declined')
  const rows = await counterRows(perHolder.id)
  assert.deepEqual(
    rows.map((r) => r.key),
    [`${perHolder.id}:1:${f.holder.id}`],
  )
})

test('a shadow velocity limit counts and records would_decline, never declining', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    mode: 'shadow',
    ...velocity({ limit_count: 1 }),
  })
  await expectApproved(t, token, f.card.id, 100)
  const second = await expectApproved(t, token, f.card.id, 100)
  assert.deepEqual(second.rule_results, [
    { rule_id: rule.id, mode: 'shadow', outcome: 'would_decline' },
  ])
  assert.deepEqual(await counted(rule.id), [200, 2])
})

test('windows roll: a day window starts again at midnight UTC, a rolling window lets an authorization go once its bucket has left', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const daily = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...velocity({ limit_count: 1 }),
  })
  await expectApproved(t, token, f.card.id, 100)
  await expectDecline(t, token, f.card.id, 100, 'rule_declined')
  const start = t.clock.now().getTime()
  try {
    const fresh = await nextDay()
    await expectApproved(t, fresh, f.card.id, 100)
    await expectDecline(t, fresh, f.card.id, 100, 'rule_declined')
    await patchRule(t, fresh, daily.id, { status: 'disabled' })

    // A rolling window of 10 minutes: buckets of 10 s.
    const rolling = await createRule(t, fresh, {
      scope: onCard(f.card.id),
      ...velocity({ window: { type: 'rolling', seconds: 600 }, limit_count: 2 }),
    })
    await expectApproved(t, fresh, f.card.id, 100)
    t.clock.advance(5 * 60_000)
    await expectApproved(t, fresh, f.card.id, 100)
    await expectDecline(t, fresh, f.card.id, 100, 'rule_declined')
    // 10 minutes and one bucket after the first: it has left; the second still counts.
    t.clock.advance(5 * 60_000 + 11_000)
    await expectApproved(t, fresh, f.card.id, 100)
    await expectDecline(t, fresh, f.card.id, 100, 'rule_declined')
    const [row] = await counterRows(rolling.id)
    assert.ok(Object.keys(row.buckets).length <= 61)
    assert.ok(row.expires_at)
  } finally {
    t.clock.advance(start - t.clock.now().getTime())
  }
})

test('changing what a limit counts (window, aggregate, filters) starts counting again; a new limit keeps what was counted', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...velocity({ limit_amount: 1000 }),
  })
  const first = await expectApproved(t, token, f.card.id, 1000)
  await expectDecline(t, token, f.card.id, 1, 'rule_declined')
  await patchRule(t, token, rule.id, { parameters: velocity({ limit_amount: 1500 }).parameters })
  await expectApproved(t, token, f.card.id, 500)
  await expectDecline(t, token, f.card.id, 1, 'rule_declined')
  await patchRule(t, token, rule.id, {
    parameters: {
      ...(velocity({ limit_amount: 1500 }).parameters as object),
      window: { type: 'week' },
    },
  })
  await expectApproved(t, token, f.card.id, 1500)
  assert.deepEqual(
    (await counterRows(rule.id)).map((r) => r.key),
    [`${rule.id}:1:${f.card.id}`, `${rule.id}:2:${f.card.id}`],
  )
  await expectDecline(t, token, f.card.id, 1, 'rule_declined')
  // Reversing an authorization counted under the first counting changes only that counting's counter.
  await post(t, token, `/v1/simulate/authorizations/${first.id}/reverse`)
  const rows = await counterRows(rule.id)
  assert.deepEqual(
    rows.map((r) => Object.values(r.buckets).map(([a, n]) => [Number(a), Number(n)])),
    [[[500, 2]], [[1500, 1]]],
  )
  await expectDecline(t, token, f.card.id, 1, 'rule_declined')
})
