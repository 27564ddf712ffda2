/**
 * A backtest over a window of a sandbox clock's time (docs/sandbox-clocks.md): the authorizations made on the clock
 * are replayed by their created_at (the clock's), though their ids are made on wall time.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { expectApproved, runJobs } from '../authorizations/support.js'
import { createRule, onCard } from '../authorization-rules/support.js'
import { advance, clockAt, fundedOnClock } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

async function backtest(ruleId: string, from: string, to: string): Promise<any> {
  const path = `/v1/authorization_rules/${ruleId}/backtests`
  const res = await t.api(token, 'POST', path, { from, to })
  assert.equal(res.statusCode, 202, res.body)
  await runJobs(t)
  const done = (await t.api(token, 'GET', `${path}/${res.json().id}`)).json()
  assert.equal(done.status, 'completed', JSON.stringify(done))
  return done.results
}

test("a backtest over a clock's days replays the authorizations made on it, by the clock's time", async () => {
  const c = await clockAt(t, token, '2030-06-01T10:00:00.000Z')
  const f = await fundedOnClock(t, tenant, token, c.id, 100_000)
  await expectApproved(t, token, f.card.id, 1000)
  const second = await expectApproved(t, token, f.card.id, 2000)
  await advance(t, token, c.id, { by: 'P2D' })
  const later = await expectApproved(t, token, f.card.id, 3000)
  assert.equal(later.created_at, '2030-06-03T10:00:00.000Z')
  const rule = await createRule(t, token, {
    scope: onCard(f.card.id),
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', limit_count: 1 },
  })

  const june = await backtest(rule.id, '2030-06-01T00:00:00Z', '2030-06-05T00:00:00Z')
  assert.equal(june.evaluated, 3)
  assert.equal(june.would_decline, 1)
  assert.deepEqual(
    june.examples.map((e: any) => [e.authorization_id, e.created_at]),
    [[second.id, '2030-06-01T10:00:00.000Z']],
  )
  // A window of the clock's third day only: the one made there.
  const third = await backtest(rule.id, '2030-06-03T00:00:00Z', '2030-06-04T00:00:00Z')
  assert.equal(third.evaluated, 1)
  // Wall time's window holds none of them.
  const now = t.clock.now().getTime()
  const wall = await backtest(
    rule.id,
    new Date(now - 86_400_000).toISOString(),
    new Date(now + 60_000).toISOString(),
  )
  assert.equal(wall.evaluated, 0)
})
