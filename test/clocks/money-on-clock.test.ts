/**
 * Sandbox clocks, credits, debits and blocking (docs/sandbox-clocks.md): an account whose cardholder is on a clock is
 * credited, debited, blocked and unblocked on the clock's time (its updated_at, its entries' created_at), and the
 * events name the clock; an account without a clock keeps wall time and events without clock_id.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { fundedCard, post } from '../authorizations/support.js'
import { advance, clockAt, fundedOnClock, storedEvents } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const T0 = '2027-05-01T08:00:00.000Z'
const T1 = '2027-05-03T08:00:00.000Z'

async function entries(accountId: string): Promise<any[]> {
  return (await t.api(token, 'GET', `/v1/accounts/${accountId}/entries`)).json().data
}

test('credits and debits under a clock are on its time and their events carry clock_id', async () => {
  const c = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, c.id, 5000)
  await advance(t, token, c.id, { to: T1 })
  const credited = await post(t, token, `/v1/accounts/${f.account.id}/credit`, { amount: 700 }, 200)
  assert.equal(credited.updated_at, T1)
  const debited = await post(t, token, `/v1/accounts/${f.account.id}/debit`, { amount: 200 }, 200)
  assert.deepEqual([debited.updated_at, debited.ledger_balance], [T1, 5500])

  const moves = (await entries(f.account.id)).filter(
    (e) => e.type === 'credit' || e.type === 'debit',
  )
  // Newest first: the debit and the credit at T1, the first credit at T0.
  assert.deepEqual(
    moves.map((e) => [e.type, e.amount, e.created_at]),
    [
      ['debit', -200, T1],
      ['credit', 700, T1],
      ['credit', 5000, T0],
    ],
  )
  const events = (await storedEvents(t, f.account.id)).filter((e) =>
    ['account.credited', 'account.debited'].includes(e.type),
  )
  assert.equal(events.length, 3)
  for (const e of events) assert.equal(e.clock_id, c.id, e.type)
  assert.deepEqual(
    events.map((e) => e.object.updated_at),
    [T0, T1, T1],
  )
})

test('several accounts credited at once: each on its own clock, or on wall time without one', async () => {
  const c1 = await clockAt(t, token, T0)
  const c2 = await clockAt(t, token, T1)
  const a = await fundedOnClock(t, tenant, token, c1.id, 0)
  const b = await fundedOnClock(t, tenant, token, c2.id, 0)
  const wall = await fundedCard(t, tenant, token, 0)
  const before = Date.now()
  const [ra, rb, rw] = await Promise.all(
    [a.account.id, b.account.id, wall.account.id].map((id) =>
      post(t, token, `/v1/accounts/${id}/credit`, { amount: 100 }, 200),
    ),
  )
  assert.deepEqual([ra.updated_at, rb.updated_at], [T0, T1])
  const wallAt = new Date(rw.updated_at).getTime()
  assert.ok(wallAt >= before - 1000 && wallAt <= Date.now() + 1000, rw.updated_at)
  const [ea] = await entries(a.account.id)
  const [eb] = await entries(b.account.id)
  const [ew] = await entries(wall.account.id)
  assert.deepEqual([ea.created_at, eb.created_at, ew.created_at], [T0, T1, rw.updated_at])
  const clockOf = async (id: string) =>
    (await storedEvents(t, id, 'account.credited')).map((e) => e.clock_id)
  assert.deepEqual(await clockOf(a.account.id), [c1.id])
  assert.deepEqual(await clockOf(b.account.id), [c2.id])
  assert.deepEqual(await clockOf(wall.account.id), [null])
})

test('blocking and unblocking under a clock are on its time and their events carry clock_id', async () => {
  const c = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, c.id, 0)
  await advance(t, token, c.id, { by: 'PT2H' })
  const blocked = await post(
    t,
    token,
    `/v1/accounts/${f.account.id}/block`,
    { reason: 'fraud' },
    200,
  )
  assert.deepEqual([blocked.status, blocked.updated_at], ['blocked', '2027-05-01T10:00:00.000Z'])
  await advance(t, token, c.id, { by: 'PT1H' })
  const open = await post(t, token, `/v1/accounts/${f.account.id}/unblock`, {}, 200)
  assert.deepEqual([open.status, open.updated_at], ['open', '2027-05-01T11:00:00.000Z'])
  const events = (await storedEvents(t, f.account.id)).filter((e) =>
    ['account.blocked', 'account.unblocked'].includes(e.type),
  )
  assert.deepEqual(
    events.map((e) => [e.type, e.clock_id, e.object.updated_at]),
    [
      ['account.blocked', c.id, '2027-05-01T10:00:00.000Z'],
      ['account.unblocked', c.id, '2027-05-01T11:00:00.000Z'],
    ],
  )
})

test('an account without a clock is blocked on wall time, its event without clock_id', async () => {
  const f = await fundedCard(t, tenant, token, 0)
  const before = Date.now()
  const blocked = await post(
    t,
    token,
    `/v1/accounts/${f.account.id}/block`,
    { reason: 'fraud' },
    200,
  )
  assert.ok(new Date(blocked.updated_at).getTime() >= before - 1000)
  const [event] = await storedEvents(t, f.account.id, 'account.blocked')
  assert.equal(event!.clock_id, null)
})
