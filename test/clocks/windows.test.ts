/**
 * Windows under a sandbox clock (docs/sandbox-clocks.md): a card's spending limits (day, week, month) and the
 * authorization rules' windows (calendar and rolling) of a card under a clock are the clock's, as is the resets_at
 * of GET /v1/cards/{id}/spend_limits; a card without a clock keeps wall-time windows.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { authorize, expectApproved, fundedCard, post } from '../authorizations/support.js'
import { advance, clockAt, fundedOnClock } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const DAILY = { spending_controls: { spending_limits: [{ amount: 1000, interval: 'daily' }] } }

async function limits(cardId: string): Promise<any[]> {
  const res = await t.api(token, 'GET', `/v1/cards/${cardId}/spend_limits`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data
}

test("a card's daily spending limit under a clock resets at the clock's midnight; a wall card's does not", async () => {
  const c = await clockAt(t, token, '2027-03-10T20:00:00.000Z')
  const f = await fundedOnClock(t, tenant, token, c.id, 10_000, DAILY)
  const wall = await fundedCard(t, tenant, token, 10_000, DAILY)
  await expectApproved(t, token, f.card.id, 800)
  await expectApproved(t, token, wall.card.id, 800)
  assert.equal((await authorize(t, token, f.card.id, 300)).decline_reason, 'spending_limit')
  const [before] = await limits(f.card.id)
  assert.deepEqual([before.used_amount, before.resets_at], [800, '2027-03-11T00:00:00.000Z'])

  await advance(t, token, c.id, { by: 'PT5H' })
  await expectApproved(t, token, f.card.id, 300)
  const [after] = await limits(f.card.id)
  assert.deepEqual([after.used_amount, after.resets_at], [300, '2027-03-12T00:00:00.000Z'])
  // The wall card's day has not moved.
  assert.equal((await authorize(t, token, wall.card.id, 300)).decline_reason, 'spending_limit')
})

async function rule(cardId: string, window: Record<string, unknown>): Promise<any> {
  return post(
    t,
    token,
    '/v1/authorization_rules',
    {
      name: `one per window ${cardId}`,
      scope: { level: 'card', ids: [cardId] },
      type: 'velocity_limit',
      parameters: { window, aggregate: 'card', limit_count: 1 },
      mode: 'active',
    },
    201,
  )
}

test("authorization rules' calendar and rolling windows under a clock are the clock's", async () => {
  const c = await clockAt(t, token, '2027-06-15T23:30:00.000Z')
  const day = await fundedOnClock(t, tenant, token, c.id, 10_000)
  const rolling = await fundedOnClock(t, tenant, token, c.id, 10_000)
  const wall = await fundedCard(t, tenant, token, 10_000)
  const dayRule = await rule(day.card.id, { type: 'day' })
  await rule(rolling.card.id, { type: 'rolling', seconds: 3600 })
  await rule(wall.card.id, { type: 'day' })
  for (const f of [day, rolling, wall]) {
    await expectApproved(t, token, f.card.id, 100)
    assert.equal((await authorize(t, token, f.card.id, 100)).decline_reason, 'rule_declined')
  }
  const ruleLimit = (await limits(day.card.id)).find((l) => l.source.rule_id === dayRule.id)
  assert.deepEqual([ruleLimit.used_count, ruleLimit.resets_at], [1, '2027-06-16T00:00:00.000Z'])

  // Past the clock's midnight: the day window is new, the rolling hour not yet over.
  await advance(t, token, c.id, { by: 'PT31M' })
  await expectApproved(t, token, day.card.id, 100)
  assert.equal((await authorize(t, token, rolling.card.id, 100)).decline_reason, 'rule_declined')
  await advance(t, token, c.id, { by: 'PT30M' })
  await expectApproved(t, token, rolling.card.id, 100)
  // The wall card's day is wall time's.
  assert.equal((await authorize(t, token, wall.card.id, 100)).decline_reason, 'rule_declined')
})
