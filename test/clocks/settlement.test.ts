/**
 * Settlement under a sandbox clock (docs/sandbox-clocks.md): a capture under a clock settles a day after it was made
 * on the clock, in the clock's advance, in time order with the other sweeps; captures without a clock and another
 * organization's are untouched by the advance, and the wall-time sweep leaves captures under a clock alone.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { frozenClock } from '../../src/lib/clock.js'
import { settleDue } from '../../src/modules/transactions/settlement.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { expectApproved, fundedCard, post } from '../authorizations/support.js'
import { advance, clockAt, fundedOnClock, storedEvents } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const T0 = '2027-05-01T08:00:00.000Z'
const at = (ms: number) => new Date(new Date(T0).getTime() + ms).toISOString()
const HOUR = 3600 * 1000
const DAY = 24 * HOUR

async function captured(tok: string, cardId: string, amount: number): Promise<any> {
  const auth = await expectApproved(t, tok, cardId, amount)
  return post(t, tok, `/v1/simulate/authorizations/${auth.id}/capture`, {}, 201)
}

const txnOf = async (tok: string, id: string) =>
  (await t.api(tok, 'GET', `/v1/transactions/${id}`)).json()

test('captures under a clock settle in its advance, in time order with hold expiry; others are untouched', async () => {
  const c = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, c.id, 10_000)
  const first = await captured(token, f.card.id, 1000)
  const held = await expectApproved(t, token, f.card.id, 300)
  await advance(t, token, c.id, { by: 'PT12H' })
  const second = await captured(token, f.card.id, 500)
  assert.equal(second.created_at, at(12 * HOUR))

  const wall = await fundedCard(t, tenant, token, 5000)
  const wallTxn = await captured(token, wall.card.id, 700)
  const other = await createTenant(t)
  const otherToken = await other.token()
  const elsewhere = await fundedCard(t, other, otherToken, 5000)
  const otherTxn = await captured(otherToken, elsewhere.card.id, 900)

  // Not yet due: a day after the first capture less a second.
  await advance(t, token, c.id, { to: at(DAY - 1000) })
  assert.equal((await txnOf(token, first.id)).status, 'pending')

  await advance(t, token, c.id, { by: 'P8D' })
  const a = await txnOf(token, first.id)
  const b = await txnOf(token, second.id)
  assert.deepEqual([a.status, a.settled_at], ['settled', at(DAY)])
  assert.deepEqual([b.status, b.settled_at], ['settled', at(DAY + 12 * HOUR)])
  const expired = (await t.api(token, 'GET', `/v1/authorizations/${held.id}`)).json()
  assert.deepEqual([expired.status, expired.updated_at], ['expired', at(7 * DAY)])

  // In time order: the first settlement, the second, then the hold's expiry; each event names the clock.
  const [sa] = await storedEvents(t, first.id, 'transaction.updated')
  const [sb] = await storedEvents(t, second.id, 'transaction.updated')
  const [ex] = await storedEvents(t, held.id, 'authorization.updated')
  assert.ok(sa.id < sb.id && sb.id < ex.id, [sa.id, sb.id, ex.id].join(' '))
  for (const e of [sa, sb, ex]) assert.equal(e.clock_id, c.id)

  // Without a clock, and in another organization: untouched by the advance.
  assert.equal((await txnOf(token, wallTxn.id)).status, 'pending')
  assert.equal((await txnOf(otherToken, otherTxn.id)).status, 'pending')

  // Advancing again settles nothing twice.
  await advance(t, token, c.id, { by: 'P1D' })
  assert.equal((await storedEvents(t, first.id, 'transaction.updated')).length, 1)
})

test('the wall-time settlement sweep leaves captures under a clock alone', async () => {
  const c = await clockAt(t, token, '2026-01-01T00:00:00.000Z')
  const f = await fundedOnClock(t, tenant, token, c.id, 5000)
  // Made on a clock far behind wall time: long past due on wall time, not on its clock.
  const onClock = await captured(token, f.card.id, 400)
  const wall = await fundedCard(t, tenant, token, 5000)
  const wallTxn = await captured(token, wall.card.id, 600)
  await settleDue({ ...t.deps, clock: frozenClock(new Date(Date.now() + 2 * DAY)) })
  assert.equal((await txnOf(token, wallTxn.id)).status, 'settled')
  assert.equal((await txnOf(token, onClock.id)).status, 'pending')
  await advance(t, token, c.id, { by: 'P1D' })
  const settled = await txnOf(token, onClock.id)
  assert.deepEqual([settled.status, settled.settled_at], ['settled', '2026-01-02T00:00:00.000Z'])
})
