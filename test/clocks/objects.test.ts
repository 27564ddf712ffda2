/**
 * Sandbox clocks, the card and money side (docs/sandbox-clocks.md): every object made for a cardholder on a clock is
 * made on the clock's time (accounts, cards, authorizations and their holds' entries, transactions, disputes), a
 * card's expiry is dated from it, a hold's expires_at is 7 days after the authorization on it, and their events
 * carry clock_id while the events' own time stays wall time.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { balances, expectApproved, fundedCard, post } from '../authorizations/support.js'
import { advance, clockAt, fundedOnClock, storedEvents } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const T0 = '2027-03-10T12:00:00.000Z'
const at = (ms: number) => new Date(new Date(T0).getTime() + ms).toISOString()
const SECOND = 1000
const HOUR = 3600 * SECOND
const DAY = 24 * HOUR

test('every object under a clock is made and moved on its time, and its events carry clock_id', async () => {
  const c = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, c.id, 5000)
  assert.equal(f.account.created_at, T0)
  assert.equal(f.card.created_at, T0)
  assert.equal(f.card.updated_at, T0)
  // The card's expiry is dated from the clock's time (three years on, the clock's month).
  assert.deepEqual([f.card.exp_month, f.card.exp_year], [3, 2030])

  const auth = await expectApproved(t, token, f.card.id, 1200)
  assert.deepEqual([auth.created_at, auth.updated_at, auth.expires_at], [T0, T0, at(7 * DAY)])
  const entries = (await t.api(token, 'GET', `/v1/accounts/${f.account.id}/entries`)).json().data
  const hold = entries.find((e: any) => e.type === 'hold')
  assert.equal(hold.created_at, T0)

  await advance(t, token, c.id, { by: 'PT1H' })
  const txn = await post(
    t,
    token,
    `/v1/simulate/authorizations/${auth.id}/capture`,
    { amount: 1000 },
    201,
  )
  assert.deepEqual([txn.created_at, txn.status], [at(HOUR), 'pending'])
  const captured = (await t.api(token, 'GET', `/v1/authorizations/${auth.id}`)).json()
  assert.equal(captured.updated_at, at(HOUR))

  // Settlement is due a day after the capture on the clock: the advance settles it at that instant.
  await advance(t, token, c.id, { by: 'P1D' })
  const settled = (await t.api(token, 'GET', `/v1/transactions/${txn.id}`)).json()
  assert.deepEqual(
    [settled.status, settled.settled_at, settled.updated_at],
    ['settled', at(DAY + HOUR), at(DAY + HOUR)],
  )

  const dispute = await post(
    t,
    token,
    '/v1/disputes',
    { transaction_id: txn.id, reason: 'not_received' },
    201,
  )
  assert.deepEqual([dispute.created_at, dispute.status], [at(DAY + HOUR), 'submitted'])
  // Its review is due on the clock (a second later): only the advance moves it.
  await advance(t, token, c.id, { by: 'PT1M' })
  const reviewed = (await t.api(token, 'GET', `/v1/disputes/${dispute.id}`)).json()
  assert.deepEqual(
    [reviewed.status, reviewed.updated_at],
    ['under_review', at(DAY + HOUR + SECOND)],
  )

  const expected: [string, string][] = [
    [f.account.id, 'account.created'],
    [f.card.id, 'card.created'],
    [f.card.id, 'card.issued'],
    [auth.id, 'authorization.created'],
    [auth.id, 'authorization.updated'],
    [txn.id, 'transaction.created'],
    [txn.id, 'transaction.updated'],
    [dispute.id, 'dispute.created'],
    [dispute.id, 'dispute.updated'],
  ]
  for (const [id, type] of expected) {
    const events = await storedEvents(t, id, type)
    assert.ok(events.length > 0, `${type} of ${id}`)
    for (const e of events) assert.equal(e.clock_id, c.id, `${type} of ${id} carries clock_id`)
  }
  // The events' own time stays wall time (docs/decisions/sandbox-clock-time.md).
  const listed = (await t.api(token, 'GET', '/v1/events?type=authorization.created')).json()
  const created = listed.data.find((e: any) => e.data.object.id === auth.id)
  assert.equal(created.clock_id, c.id)
  assert.ok(new Date(created.created_at).getTime() < new Date(T0).getTime(), created.created_at)
})

test('a hold under a clock expires 7 days after the authorization on the clock, at that instant, in the advance', async () => {
  const c = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, c.id, 3000)
  const auth = await expectApproved(t, token, f.card.id, 800)
  assert.equal(auth.expires_at, at(7 * DAY))
  const wall = await fundedCard(t, tenant, token, 3000)
  const wallAuth = await expectApproved(t, token, wall.card.id, 500)
  // Wall-time authorizations are made on wall time, as before.
  assert.ok(new Date(wallAuth.created_at).getTime() < new Date(T0).getTime())

  await advance(t, token, c.id, { to: at(7 * DAY - SECOND) })
  assert.equal(
    (await t.api(token, 'GET', `/v1/authorizations/${auth.id}`)).json().status,
    'pending',
  )
  await advance(t, token, c.id, { by: 'PT1S' })
  const expired = (await t.api(token, 'GET', `/v1/authorizations/${auth.id}`)).json()
  assert.deepEqual([expired.status, expired.updated_at], ['expired', at(7 * DAY)])
  assert.equal((await balances(t, token, f.account.id)).held, 0)
  const [updated] = await storedEvents(t, auth.id, 'authorization.updated')
  assert.equal(updated.clock_id, c.id)
  // The wall-time authorization is untouched by the advance.
  assert.equal(
    (await t.api(token, 'GET', `/v1/authorizations/${wallAuth.id}`)).json().status,
    'pending',
  )
  assert.equal((await balances(t, token, wall.account.id)).held, 500)
})
