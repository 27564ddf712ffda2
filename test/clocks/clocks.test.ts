import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { ADDRESS, attest, cardBody, issuedCard, makeAccount } from '../cards/support.js'
import {
  balances,
  eventsFor,
  expectApproved,
  expectError,
  fundedCard,
  post,
  runJobs,
} from '../authorizations/support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const DAY = 24 * 3600 * 1000
let counter = 0

async function clock(body: Record<string, unknown> = {}): Promise<any> {
  return post(t, token, '/v1/simulate/clocks', body, 201)
}

/** A cardholder on `clockId` with an approved KYC, a USD account credited with `balance` and an active card. */
async function fundedOnClock(clockId: string, balance: number) {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Clara',
    last_name: 'Clock',
    email: `clock.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: ADDRESS,
    identity_document: { type: 'passport', number: `C${counter}000222` },
    clock_id: clockId,
  })
  assert.equal(res.statusCode, 201, res.body)
  const holder = res.json()
  await attest(t, token, holder.id, 'approved', true)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  await post(t, token, `/v1/accounts/${account.id}/credit`, { amount: balance }, 200)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  return { holder, account, card }
}

const getAuth = async (tok: string, id: string) =>
  (await t.api(tok, 'GET', `/v1/authorizations/${id}`)).json()

test('a clock: created at a frozen time, retrieved, listed; sandbox_clock.created carries its clock_id', async () => {
  const c = await clock({ frozen_time: '2026-01-01T00:00:00Z', name: 'expiry' })
  assert.match(c.id, /^clk_/)
  assert.deepEqual(
    [c.object, c.name, c.frozen_time, c.status],
    ['sandbox_clock', 'expiry', '2026-01-01T00:00:00.000Z', 'ready'],
  )
  assert.equal(new Date(c.deletes_after).getTime() - new Date(c.created_at).getTime(), 30 * DAY)
  const before = t.clock.now().getTime()
  const now = await clock()
  const frozen = new Date(now.frozen_time).getTime()
  assert.ok(frozen >= before && frozen <= t.clock.now().getTime(), now.frozen_time)
  assert.deepEqual((await t.api(token, 'GET', `/v1/simulate/clocks/${c.id}`)).json(), c)
  const list = (await t.api(token, 'GET', '/v1/simulate/clocks?limit=1')).json()
  assert.deepEqual([list.object, list.data.length, list.has_more], ['list', 1, true])
  assert.equal(list.data[0].id, now.id)
  const next = (
    await t.api(token, 'GET', `/v1/simulate/clocks?limit=1&starting_after=${list.next_cursor}`)
  ).json()
  assert.equal(next.data[0].id, c.id)
  const [created] = await eventsFor(t, c.id, 'sandbox_clock.created')
  assert.equal(created.object.id, c.id)
  const row = await t.deps.db
    .selectFrom('events')
    .select('clock_id')
    .where('type', '=', 'sandbox_clock.created')
    .where('clock_id', '=', c.id)
    .executeTakeFirst()
  assert.ok(row)
})

test('advancing past a hold expires the authorizations under the clock only: reversed, balance released, events with clock_id', async () => {
  const c = await clock()
  const onClock = await fundedOnClock(c.id, 5000)
  assert.equal(onClock.holder.clock_id, c.id)
  const kycEvent = await t.deps.db
    .selectFrom('events')
    .select('clock_id')
    .where('type', '=', 'cardholder.kyc_updated')
    .orderBy('id', 'desc')
    .executeTakeFirstOrThrow()
  assert.equal(kycEvent.clock_id, c.id)
  const auth = await expectApproved(t, token, onClock.card.id, 1200)
  const wall = await fundedCard(t, tenant, token, 5000)
  const wallAuth = await expectApproved(t, token, wall.card.id, 700)
  const other = await createTenant(t)
  const otherToken = await other.token()
  const elsewhere = await fundedCard(t, other, otherToken, 5000)
  const otherAuth = await expectApproved(t, otherToken, elsewhere.card.id, 900)

  const p1d = await post(t, token, `/v1/simulate/clocks/${c.id}/advance`, { by: 'P1D' }, 200)
  assert.equal(p1d.status, 'ready')
  assert.equal(new Date(p1d.frozen_time).getTime() - new Date(c.frozen_time).getTime(), DAY)
  assert.equal((await getAuth(token, auth.id)).status, 'pending')

  // The hold's lifetime (7 days) and a day more.
  const advanced = await post(t, token, `/v1/simulate/clocks/${c.id}/advance`, { by: 'P7D' }, 200)
  assert.equal(advanced.status, 'ready')
  const expired = await getAuth(token, auth.id)
  assert.deepEqual([expired.status, expired.held_amount], ['expired', 0])
  assert.deepEqual(await balances(t, token, onClock.account.id), {
    ledger: 5000,
    held: 0,
    available: 5000,
  })
  assert.equal((await getAuth(token, wallAuth.id)).status, 'pending')
  assert.equal((await balances(t, token, wall.account.id)).held, 700)
  assert.equal((await getAuth(otherToken, otherAuth.id)).status, 'pending')

  const updates = await t.deps.db
    .selectFrom('events')
    .select(['type', 'clock_id', 'data'])
    .where('type', 'in', ['authorization.updated', 'sandbox_clock.ready', 'cardholder.created'])
    .where('clock_id', '=', c.id)
    .orderBy('id')
    .execute()
  const objects = updates.map((e) => {
    const data = typeof e.data === 'string' ? JSON.parse(e.data) : (e.data as any)
    return [e.type, data.object.id]
  })
  assert.deepEqual(objects, [
    ['cardholder.created', onClock.holder.id],
    ['sandbox_clock.ready', c.id],
    ['authorization.updated', auth.id],
    ['sandbox_clock.ready', c.id],
  ])
  const events = (await t.api(token, 'GET', '/v1/events?type=authorization.updated')).json()
  const mine = events.data.find((e: any) => e.data.object.id === auth.id)
  assert.equal(mine.clock_id, c.id)

  // Nothing runs twice: advancing again expires nothing more and emits one more ready.
  await post(t, token, `/v1/simulate/clocks/${c.id}/advance`, { by: 'PT1H' }, 200)
  assert.equal((await eventsFor(t, auth.id, 'authorization.updated')).length, 1)
})

test('an interrupted advance stays advancing with its target; the next advance finishes it first', async () => {
  const c = await clock()
  const f = await fundedOnClock(c.id, 3000)
  const auth = await expectApproved(t, token, f.card.id, 500)
  const target = new Date(new Date(c.frozen_time).getTime() + 9 * DAY)
  await t.deps.db
    .updateTable('sandbox_clocks')
    .set({ status: 'advancing', advancing_to: target })
    .where('id', '=', c.id)
    .execute()
  assert.equal(
    (await t.api(token, 'GET', `/v1/simulate/clocks/${c.id}`)).json().status,
    'advancing',
  )
  // Untouched for over a minute: no advance is running it any more.
  t.clock.advance(2 * 60_000)
  const after = await post(t, token, `/v1/simulate/clocks/${c.id}/advance`, { by: 'P1D' }, 200)
  assert.equal(after.frozen_time, new Date(target.getTime() + DAY).toISOString())
  assert.equal((await getAuth(token, auth.id)).status, 'expired')
  assert.equal((await eventsFor(t, c.id, 'sandbox_clock.ready')).length, 2)
})

test('bad inputs answer 400 invalid_parameter naming the field; unknown clocks 404', async () => {
  const c = await clock({ frozen_time: '2026-01-01T00:00:00Z' })
  const adv = (body: unknown) => t.api(token, 'POST', `/v1/simulate/clocks/${c.id}/advance`, body)
  expectError(await adv({}), 400, 'invalid_parameter', 'to')
  expectError(await adv({ to: '2026-02-01T00:00:00Z', by: 'P1D' }), 400, 'invalid_parameter')
  expectError(await adv({ by: '1 day' }), 400, 'invalid_parameter', 'by')
  expectError(await adv({ by: 'P731D' }), 400, 'invalid_parameter', 'by')
  expectError(await adv({ to: '2025-12-31T00:00:00Z' }), 400, 'invalid_parameter', 'to')
  expectError(await adv({ to: '2026-01-01T00:00:00Z' }), 400, 'invalid_parameter', 'to')
  expectError(await adv({ to: 'tomorrow' }), 400, 'invalid_parameter', 'to')
  const ok = await post(t, token, `/v1/simulate/clocks/${c.id}/advance`, { by: 'P1M' }, 200)
  assert.equal(ok.frozen_time, '2026-02-01T00:00:00.000Z')
  const two = await post(t, token, `/v1/simulate/clocks/${c.id}/advance`, { by: 'P730D' }, 200)
  assert.equal(two.frozen_time, '2028-02-01T00:00:00.000Z')
  expectError(
    await t.api(token, 'GET', '/v1/simulate/clocks/clk_01JD3Q7Y6X5W4V3T2S1R0Q9P8N'),
    404,
    'sandbox_clock_not_found',
  )
  const bad = (clockId: string) =>
    t.api(token, 'POST', '/v1/cardholders', {
      type: 'individual',
      first_name: 'No',
      last_name: 'Clock',
      email: `noclock.${++counter}.${Date.now()}@example.com`,
      clock_id: clockId,
    })
  expectError(await bad('clk_01JD3Q7Y6X5W4V3T2S1R0Q9P8N'), 400, 'invalid_parameter', 'clock_id')
  const other = await createTenant(t)
  const theirs = await post(t, await other.token(), '/v1/simulate/clocks', {}, 201)
  expectError(await bad(theirs.id), 400, 'invalid_parameter', 'clock_id')
  expectError(
    await t.api(token, 'GET', `/v1/simulate/clocks/${theirs.id}`),
    404,
    'sandbox_clock_not_found',
  )
})

test('while an advance runs: advancing again or deleting answers 409 sandbox_clock_advancing', async () => {
  const c = await clock()
  await t.deps.db
    .updateTable('sandbox_clocks')
    .set({
      status: 'advancing',
      advancing_to: new Date(new Date(c.frozen_time).getTime() + DAY),
      updated_at: t.clock.now(),
    })
    .where('id', '=', c.id)
    .execute()
  expectError(
    await t.api(token, 'POST', `/v1/simulate/clocks/${c.id}/advance`, { by: 'P1D' }),
    409,
    'sandbox_clock_advancing',
  )
  expectError(
    await t.api(token, 'DELETE', `/v1/simulate/clocks/${c.id}`),
    409,
    'sandbox_clock_advancing',
  )
  assert.equal(
    (await t.api(token, 'GET', `/v1/simulate/clocks/${c.id}`)).json().status,
    'advancing',
  )
})

test('deleting a clock: 404 afterwards, its cardholders deleted with it, sandbox_clock.deleted', async () => {
  const c = await clock()
  const f = await fundedOnClock(c.id, 1000)
  const res = await t.api(token, 'DELETE', `/v1/simulate/clocks/${c.id}`)
  assert.equal(res.statusCode, 200, res.body)
  assert.deepEqual(res.json(), { id: c.id, object: 'sandbox_clock', deleted: true })
  expectError(
    await t.api(token, 'GET', `/v1/simulate/clocks/${c.id}`),
    404,
    'sandbox_clock_not_found',
  )
  expectError(
    await t.api(token, 'DELETE', `/v1/simulate/clocks/${c.id}`),
    404,
    'sandbox_clock_not_found',
  )
  expectError(
    await t.api(token, 'GET', `/v1/cardholders/${f.holder.id}`),
    404,
    'cardholder_not_found',
  )
  assert.equal((await eventsFor(t, c.id, 'sandbox_clock.deleted')).length, 1)
})

test('production: the clock routes answer 404 not_found and clock_id is refused', async () => {
  const prod = await createTenant(t, { environment: 'production' })
  const prodToken = await prod.token()
  expectError(await t.api(prodToken, 'POST', '/v1/simulate/clocks', {}), 404, 'not_found')
  expectError(await t.api(prodToken, 'GET', '/v1/simulate/clocks'), 404, 'not_found')
  const res = await t.api(prodToken, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Prod',
    last_name: 'Holder',
    email: `prod.${++counter}.${Date.now()}@example.com`,
    clock_id: 'clk_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
  })
  expectError(res, 400, 'invalid_parameter', 'clock_id')
})

test('the wall-time expiry sweep leaves the holds under a clock alone', async () => {
  const c = await clock()
  const f = await fundedOnClock(c.id, 2000)
  const held = await expectApproved(t, token, f.card.id, 400)
  const wall = await fundedCard(t, tenant, token, 2000)
  const wallHeld = await expectApproved(t, token, wall.card.id, 300)
  await ensureSchedules(t.deps, t.jobs)
  t.clock.advance(8 * DAY)
  await runJobs(t)
  token = await tenant.token()
  assert.equal((await getAuth(token, wallHeld.id)).status, 'expired')
  assert.equal((await getAuth(token, held.id)).status, 'pending')
  assert.equal((await balances(t, token, f.account.id)).held, 400)
})

test('the worker finishes an advance left advancing, once; a clock past deletes_after is deleted', async () => {
  token = await tenant.token()
  const c = await clock()
  const f = await fundedOnClock(c.id, 2000)
  const held = await expectApproved(t, token, f.card.id, 250)
  const target = new Date(new Date(c.frozen_time).getTime() + 8 * DAY)
  await t.deps.db
    .updateTable('sandbox_clocks')
    .set({ status: 'advancing', advancing_to: target })
    .where('id', '=', c.id)
    .execute()
  await ensureSchedules(t.deps, t.jobs)
  t.clock.advance(2 * 60_000)
  await runJobs(t)
  token = await tenant.token()
  const done = (await t.api(token, 'GET', `/v1/simulate/clocks/${c.id}`)).json()
  assert.deepEqual([done.status, done.frozen_time], ['ready', target.toISOString()])
  assert.equal((await getAuth(token, held.id)).status, 'expired')
  assert.equal((await eventsFor(t, c.id, 'sandbox_clock.ready')).length, 1)
  assert.equal((await eventsFor(t, held.id, 'authorization.updated')).length, 1)

  t.clock.advance(31 * DAY)
  await runJobs(t)
  token = await tenant.token()
  expectError(
    await t.api(token, 'GET', `/v1/simulate/clocks/${c.id}`),
    404,
    'sandbox_clock_not_found',
  )
  assert.equal((await eventsFor(t, c.id, 'sandbox_clock.deleted')).length, 1)
})
