/**
 * Card expiry under a sandbox clock (docs/sandbox-clocks.md): the card's expiry is dated from the clock's time and its
 * card.expire job waits on the clock: the card expires in the clock's advance at the first instant after its expiry
 * month, never on wall time; cards without a clock, another clock's, and another organization's are untouched.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { fundedCard, runJobs } from '../authorizations/support.js'
import { advance, clockAt, fundedOnClock, storedEvents } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const DAY = 24 * 3600 * 1000

test('a card under a clock expires in the advance at its expiry instant on the clock, and only there', async () => {
  const c = await clockAt(t, token, '2027-03-10T12:00:00.000Z')
  const f = await fundedOnClock(t, tenant, token, c.id, 0)
  assert.deepEqual([f.card.exp_month, f.card.exp_year], [3, 2030])
  const later = await clockAt(t, token, '2027-03-10T12:00:00.000Z')
  const untouched = await fundedOnClock(t, tenant, token, later.id, 0)
  const wall = await fundedCard(t, tenant, token, 0)
  const other = await createTenant(t)
  const otherToken = await other.token()
  const elsewhere = await fundedCard(t, other, otherToken, 0)

  await advance(t, token, c.id, { to: '2029-03-01T00:00:00.000Z' })
  await advance(t, token, c.id, { to: '2030-03-31T23:59:59.000Z' })
  const card = async (tok: string, id: string) =>
    (await t.api(tok, 'GET', `/v1/cards/${id}`)).json()
  assert.equal((await card(token, f.card.id)).status, 'active')
  await advance(t, token, c.id, { by: 'PT1S' })
  const expired = await card(token, f.card.id)
  assert.deepEqual([expired.status, expired.updated_at], ['expired', '2030-04-01T00:00:00.000Z'])
  const [event] = await storedEvents(t, f.card.id, 'card.expired')
  assert.equal(event.clock_id, c.id)
  assert.equal((await card(token, untouched.card.id)).status, 'active')
  assert.equal((await card(token, wall.card.id)).status, 'active')
  assert.equal((await card(otherToken, elsewhere.card.id)).status, 'active')

  // On wall time, past every card's expiry: the wall cards expire; the card under the other clock waits for its clock.
  t.clock.advance(4 * 366 * DAY)
  await runJobs(t)
  token = await tenant.token()
  assert.equal((await card(token, wall.card.id)).status, 'expired')
  assert.equal((await card(token, untouched.card.id)).status, 'active')
})
