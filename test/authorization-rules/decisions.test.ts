/**
 * Authorization rules in the decision (docs/authorization-rules.md, "In the decision"): the rules that apply to the
 * card are read in the decision's own statement and evaluated after the card's own controls; a decline names the rule,
 * every decision records what each rule said, and the facts a condition reads (the card's age and last hour) come from
 * the card and its activity row, never from a scan of its history per decision.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { eventsFor } from '../helpers/api.js'
import { withTenant } from '../helpers/tenant.js'
import {
  authorize,
  balances,
  expectApproved,
  expectDecline,
  fundedCard,
  post,
  secondCard,
} from '../authorizations/support.js'
import {
  answerWith,
  putEndpoint,
  requestsAbout,
  startReceiver,
} from '../authorizations/integrator-support.js'
import { condition, createRule, onCard, patchRule } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const MINUTE = 60_000

async function activityRow(cardId: string) {
  return t.deps.db
    .selectFrom('authorization_rule_activity')
    .selectAll()
    .where('card_id', '=', cardId)
    .executeTakeFirst()
}

test('an active condition rule declines rule_declined naming itself; the REST object, its event and a read agree', async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['amount', 'gt', 5000], ['mcc', 'is', '5814']),
  })
  const ok = await expectApproved(t, token, f.card.id, 5000)
  assert.deepEqual(ok.rule_results, [{ rule_id: rule.id, mode: 'active', outcome: 'passed' }])
  assert.equal(ok.rule_id, null)
  const declined = await expectDecline(t, token, f.card.id, 5001, 'rule_declined')
  assert.equal(declined.rule_id, rule.id)
  assert.deepEqual(declined.rule_results, [
    { rule_id: rule.id, mode: 'active', outcome: 'declined' },
  ])
  assert.deepEqual(declined.request_history[0].rule_results, declined.rule_results)
  assert.equal(declined.request_history[0].rule_id, rule.id)
  const [event] = await eventsFor(t, declined.id, 'authorization.created')
  assert.deepEqual(event.object, declined)
  assert.deepEqual(
    (await t.api(token, 'GET', `/v1/authorizations/${declined.id}`)).json(),
    declined,
  )
  // Another merchant: not every condition holds.
  await expectApproved(t, token, f.card.id, 9000, {
    merchant: { name: 'Grocer', mcc: '5411', country: 'USA' },
  })
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 100_000,
    held: 14_000,
    available: 86_000,
  })
})

test('a shadow rule never declines: it records would_decline; every rule is recorded in id order, the first active decline names the decision', async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  const shadow = await createRule(t, token, {
    scope: onCard(f.card.id),
    mode: 'shadow',
    ...condition(['merchant_name', 'matches', 'corner*']),
  })
  const passing = await createRule(t, token, {
    scope: { level: 'account', ids: [f.account.id] },
    ...condition(['merchant_country', 'is', 'FRA']),
  })
  const auth = await expectApproved(t, token, f.card.id, 1000)
  assert.deepEqual(auth.rule_results, [
    { rule_id: shadow.id, mode: 'shadow', outcome: 'would_decline' },
    { rule_id: passing.id, mode: 'active', outcome: 'passed' },
  ])
  const first = await createRule(t, token, {
    scope: { level: 'cardholder', ids: [f.holder.id] },
    ...condition(['amount', 'gte', 1]),
  })
  const second = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['amount', 'gte', 1]),
  })
  const declined = await expectDecline(t, token, f.card.id, 1000, 'rule_declined')
  assert.equal(declined.rule_id, first.id)
  assert.deepEqual(
    declined.rule_results.map((r: any) => [r.rule_id, r.outcome]),
    [
      [shadow.id, 'would_decline'],
      [passing.id, 'passed'],
      [first.id, 'declined'],
      [second.id, 'declined'],
    ],
  )
  // A disabled rule, a deleted one and one excluding the card apply to no decision.
  await patchRule(t, token, first.id, { status: 'disabled' })
  assert.equal(
    (await t.api(token, 'DELETE', `/v1/authorization_rules/${second.id}`)).statusCode,
    200,
  )
  const other = await secondCard(t, token, f)
  await createRule(t, token, {
    scope: { level: 'account', ids: [f.account.id], exclude_ids: [other.id] },
    ...condition(['amount', 'gte', 1]),
  })
  const through = await expectApproved(t, token, other.id, 1000)
  assert.deepEqual(
    through.rule_results.map((r: any) => r.rule_id),
    [passing.id],
  )
})

test("the card's own controls come first: a decline by them records no rule results; insufficient funds after the rules keeps them", async () => {
  const f = await fundedCard(t, tenant, token, 2000, {
    spending_controls: { blocked_mccs: ['7995'] },
  })
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['mcc', 'is', '7995']),
  })
  const blocked = await expectDecline(t, token, f.card.id, 100, 'mcc_blocked', {
    merchant: { name: 'Casino', mcc: '7995', country: 'USA' },
  })
  assert.deepEqual(blocked.rule_results, [])
  assert.equal(blocked.rule_id, null)
  const short = await expectDecline(t, token, f.card.id, 5000, 'insufficient_funds')
  assert.deepEqual(short.rule_results, [{ rule_id: rule.id, mode: 'active', outcome: 'passed' }])
  // A frozen card: declined before any rule.
  await post(t, token, `/v1/cards/${f.card.id}/freeze`)
  assert.deepEqual((await expectDecline(t, token, f.card.id, 100, 'card_frozen')).rule_results, [])
})

test('a merchant lock lets only its merchants through', async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  const lock = await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'merchant_lock',
    parameters: { merchants: [{ name: 'AMZN*' }, { mcc: '5411', country: 'USA' }] },
  })
  await expectApproved(t, token, f.card.id, 100, {
    merchant: { name: 'AMZN Mktp US', mcc: '5942', country: 'USA' },
  })
  await expectApproved(t, token, f.card.id, 100, {
    merchant: { name: 'Grocer', mcc: '5411', country: 'USA' },
  })
  const declined = await expectDecline(t, token, f.card.id, 100, 'rule_declined', {
    merchant: { name: 'Grocer', mcc: '5411', country: 'CAN' },
  })
  assert.equal(declined.rule_id, lock.id)
})

test('card_age_seconds reads the card row: a rule on new cards declines until the card is old enough', async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['card_age_seconds', 'lt', 3600], ['amount', 'gt', 1000]),
  })
  await expectDecline(t, token, f.card.id, 2000, 'rule_declined')
  t.clock.advance(61 * MINUTE)
  try {
    await expectApproved(t, await tenant.token(), f.card.id, 2000)
  } finally {
    t.clock.advance(-61 * MINUTE)
  }
})

test("the last hour's counts: seeded once from the card's authorizations when a rule reading them starts to apply, then kept by each decision; dropped when no rule reads them", async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  // Before any rule reads them, decisions keep no activity row.
  await expectApproved(t, token, f.card.id, 100)
  await expectApproved(t, token, f.card.id, 100)
  await expectDecline(t, token, f.card.id, 500_000, 'insufficient_funds')
  assert.equal(await activityRow(f.card.id), undefined)

  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['authorization_count_1h', 'gte', 3]),
  })
  const shadow = await createRule(t, token, {
    scope: onCard(f.card.id),
    mode: 'shadow',
    ...condition(['decline_count_1h', 'gte', 2]),
  })
  // Two approved and one declined in the hour: the third approval passes, and the row is made with all four.
  const third = await expectApproved(t, token, f.card.id, 100)
  assert.deepEqual(
    third.rule_results.map((r: any) => r.outcome),
    ['passed', 'passed'],
  )
  const row = await activityRow(f.card.id)
  assert.ok(row)
  assert.deepEqual(
    Object.values(row.buckets).reduce((s, [a, d]) => [s[0] + a, s[1] + d], [0, 0]),
    [3, 1],
  )
  // The fourth: three approved before it.
  const fourth = await expectDecline(t, token, f.card.id, 100, 'rule_declined')
  assert.equal(fourth.rule_id, rule.id)
  assert.deepEqual(
    fourth.rule_results.map((r: any) => r.outcome),
    ['declined', 'passed'],
  )
  // Now two declines in the hour: the shadow rule would decline.
  const fifth = await expectDecline(t, token, f.card.id, 100, 'rule_declined')
  assert.deepEqual(
    fifth.rule_results.map((r: any) => [r.rule_id, r.outcome]),
    [
      [rule.id, 'declined'],
      [shadow.id, 'would_decline'],
    ],
  )

  // No rule reads them any more: the next decision deletes the row, and decisions go uncounted …
  await patchRule(t, token, rule.id, { status: 'disabled' })
  await patchRule(t, token, shadow.id, { status: 'disabled' })
  await expectApproved(t, token, f.card.id, 100)
  assert.equal(await activityRow(f.card.id), undefined)
  await expectApproved(t, token, f.card.id, 100)
  // … until a rule reads them again: seeded from the hour's authorizations, those made meanwhile included.
  await patchRule(t, token, rule.id, { status: 'enabled' })
  const again = await expectDecline(t, token, f.card.id, 100, 'rule_declined')
  assert.equal(again.rule_id, rule.id)
  const seeded = await activityRow(f.card.id)
  assert.deepEqual(
    Object.values(seeded!.buckets).reduce((s, [a, d]) => [s[0] + a, s[1] + d], [0, 0]),
    [5, 4],
  )

  // An hour and a minute later the counts have left the window.
  t.clock.advance(62 * MINUTE)
  try {
    const later = await expectApproved(t, await tenant.token(), f.card.id, 100)
    assert.deepEqual(later.rule_results, [{ rule_id: rule.id, mode: 'active', outcome: 'passed' }])
  } finally {
    t.clock.advance(-62 * MINUTE)
  }
})

test("a card's activity row keeps its updated_at for a minute (the purge's key is not rewritten by every decision), its counts move with each", async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['authorization_count_1h', 'gte', 100]),
  })
  const counts = async () =>
    Object.values((await activityRow(f.card.id))!.buckets).reduce(
      (s, [a, d]) => [s[0] + a, s[1] + d],
      [0, 0],
    )
  await expectApproved(t, token, f.card.id, 100)
  const made = (await activityRow(f.card.id))!.updated_at
  t.clock.advance(30_000)
  await expectApproved(t, await tenant.token(), f.card.id, 100)
  assert.deepEqual((await activityRow(f.card.id))!.updated_at, made)
  assert.deepEqual(await counts(), [2, 0])
  t.clock.advance(31_000)
  await expectApproved(t, await tenant.token(), f.card.id, 100)
  const touched = (await activityRow(f.card.id))!.updated_at
  assert.ok(touched.getTime() - made.getTime() >= 61_000)
  assert.deepEqual(await counts(), [3, 0])
})

test('several decisions on one card in one batch count each other in the last hour', async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['authorization_count_1h', 'gte', 4]),
  })
  const results = await Promise.all(
    Array.from({ length: 10 }, () => authorize(t, token, f.card.id, 100)),
  )
  assert.equal(results.filter((a) => a.approved).length, 4)
  assert.ok(results.filter((a) => !a.approved).every((a) => a.decline_reason === 'rule_declined'))
  const row = await activityRow(f.card.id)
  assert.deepEqual(
    Object.values(row!.buckets).reduce((s, [a, d]) => [s[0] + a, s[1] + d], [0, 0]),
    [4, 6],
  )
})

test('an increment is judged on its increase; a rule that declines it records the rule on that request and the authorization keeps its hold', async () => {
  const f = await fundedCard(t, tenant, token, 100_000)
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    ...condition(['amount', 'gt', 1500]),
  })
  const auth = await expectApproved(t, token, f.card.id, 1000)
  const raised = await post(t, token, `/v1/simulate/authorizations/${auth.id}/increment`, {
    amount: 1500,
  })
  assert.equal(raised.amount, 2500)
  const refused = await post(t, token, `/v1/simulate/authorizations/${auth.id}/increment`, {
    amount: 1501,
  })
  assert.equal(refused.status, 'pending')
  assert.equal(refused.amount, 2500)
  assert.equal(refused.held_amount, 2500)
  assert.equal(refused.decline_reason, null)
  assert.equal(refused.rule_id, null)
  const last = refused.request_history[2]
  assert.deepEqual(
    [last.type, last.approved, last.decline_reason, last.rule_id],
    ['increment', false, 'rule_declined', rule.id],
  )
  assert.deepEqual(refused.rule_results, [
    { rule_id: rule.id, mode: 'active', outcome: 'declined' },
  ])
})

test("the integrator's request carries the rules' results, and a rule that declines is never sent", async () => {
  const other = await createTenant(t)
  const otherToken = await other.token()
  const receiver = await startReceiver('/authorize')
  try {
    answerWith(receiver, { approved: true })
    await putEndpoint(t, otherToken, { url: receiver.url, timeout_ms: 1000, stand_in: 'decline' })
    const f = await fundedCard(t, other, otherToken, 100_000)
    const shadow = await createRule(t, otherToken, {
      scope: onCard(f.card.id),
      mode: 'shadow',
      ...condition(['amount', 'gt', 100]),
    })
    const active = await createRule(t, otherToken, {
      scope: onCard(f.card.id),
      ...condition(['amount', 'gt', 5000]),
    })
    const auth = await expectApproved(t, otherToken, f.card.id, 1000)
    const results = [
      { rule_id: shadow.id, mode: 'shadow', outcome: 'would_decline' },
      { rule_id: active.id, mode: 'active', outcome: 'passed' },
    ]
    assert.deepEqual(auth.rule_results, results)
    const [asked] = requestsAbout(receiver, auth.id)
    assert.deepEqual(asked.body.data.object.rule_results, results)
    assert.equal(asked.body.data.object.rule_id, null)
    const declined = await expectDecline(t, otherToken, f.card.id, 6000, 'rule_declined')
    assert.equal(declined.decision.source, 'svc')
    assert.deepEqual(requestsAbout(receiver, declined.id), [])
  } finally {
    await receiver.close()
  }
})
