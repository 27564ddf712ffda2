/**
 * Sandbox clocks, card changes (docs/sandbox-clocks.md): updating, freezing, unfreezing, activating, closing, setting
 * the PIN, shipping and replacing a card whose cardholder is on a clock happen on the clock's time, and their events
 * carry clock_id; a card's issuance waits on the clock (its `card.issue` job runs in the clock's advance, at the
 * clock's time). A card without a clock is unchanged: wall time, no clock_id, its issuance on wall time.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { sql } from 'kysely'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { fundedCard, post } from '../authorizations/support.js'
import { cardBody, encryptPin, runJobs } from '../cards/support.js'
import { completedOrder, packageFor } from '../esim/support.js'
import { advance, clockAt, fundedOnClock, storedEvents } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const T0 = '2027-06-01T09:00:00.000Z'
const at = (minutes: number) => new Date(new Date(T0).getTime() + minutes * 60_000).toISOString()

async function eventsOf(id: string, type: string) {
  return (await storedEvents(t, id, type)).map((e) => [e.clock_id, e.object.updated_at])
}

test('updating, freezing, unfreezing and closing a card under a clock: its time, events with clock_id', async () => {
  const c = await clockAt(t, token, T0)
  const { card } = await fundedOnClock(t, tenant, token, c.id, 0)
  await advance(t, token, c.id, { by: 'PT10M' })
  const updated = (
    await t.api(token, 'PATCH', `/v1/cards/${card.id}`, { metadata: { k: 'v' } })
  ).json()
  assert.equal(updated.updated_at, at(10))
  assert.deepEqual(await eventsOf(card.id, 'card.updated'), [[c.id, at(10)]])

  await advance(t, token, c.id, { by: 'PT10M' })
  const frozen = await post(t, token, `/v1/cards/${card.id}/freeze`, {}, 200)
  assert.deepEqual([frozen.status, frozen.updated_at], ['frozen', at(20)])
  await advance(t, token, c.id, { by: 'PT10M' })
  await post(t, token, `/v1/cards/${card.id}/unfreeze`, {}, 200)
  await advance(t, token, c.id, { by: 'PT10M' })
  const closed = await post(t, token, `/v1/cards/${card.id}/close`, {}, 200)
  assert.deepEqual([closed.status, closed.updated_at], ['closed', at(40)])
  assert.deepEqual(await eventsOf(card.id, 'card.frozen'), [[c.id, at(20)]])
  assert.deepEqual(await eventsOf(card.id, 'card.unfrozen'), [[c.id, at(30)]])
  assert.deepEqual(await eventsOf(card.id, 'card.closed'), [[c.id, at(40)]])
})

test('activating, shipping and setting the PIN of a physical card under a clock: its time, events with clock_id', async () => {
  const c = await clockAt(t, token, T0)
  const { card } = await fundedOnClock(t, tenant, token, c.id, 0, {
    form_factor: 'physical',
    card_type: 'debit',
  })
  await advance(t, token, c.id, { by: 'PT5M' })
  const shipped = await post(t, token, `/v1/simulate/cards/${card.id}/ship`, {}, 200)
  assert.deepEqual([shipped.shipping.status, shipped.shipping.shipped_at], ['shipped', at(5)])
  assert.equal(shipped.updated_at, at(5))
  await advance(t, token, c.id, { by: 'PT5M' })
  const active = await post(t, token, `/v1/cards/${card.id}/activate`, {}, 200)
  assert.deepEqual([active.status, active.updated_at], ['active', at(10)])
  await advance(t, token, c.id, { by: 'PT5M' })
  const key = await post(t, token, `/v1/cards/${card.id}/pin-key`, {}, 201)
  const pinned = await post(
    t,
    token,
    `/v1/cards/${card.id}/pin`,
    { pin_key_id: key.id, encrypted_pin: encryptPin(key.public_key_pem, '4821') },
    200,
  )
  assert.deepEqual([pinned.pin_set, pinned.updated_at], [true, at(15)])
  assert.deepEqual(await eventsOf(card.id, 'card.shipped'), [[c.id, at(5)]])
  assert.deepEqual(await eventsOf(card.id, 'card.activated'), [[c.id, at(10)]])
  assert.deepEqual(await eventsOf(card.id, 'card.pin_set'), [[c.id, at(15)]])
})

test('a replacement under a clock is made on its time and issued in its advance, at its time', async () => {
  const c = await clockAt(t, token, T0)
  const { card } = await fundedOnClock(t, tenant, token, c.id, 0)
  await advance(t, token, c.id, { by: 'PT1H' })
  const res = await t.api(token, 'POST', `/v1/cards/${card.id}/replace`, { reason: 'lost' })
  assert.equal(res.statusCode, 201, res.body)
  const fresh = res.json()
  assert.deepEqual([fresh.status, fresh.created_at], ['pending', at(60)])
  const old = (await t.api(token, 'GET', `/v1/cards/${card.id}`)).json()
  assert.deepEqual([old.status, old.updated_at], ['closed', at(60)])
  assert.deepEqual(await eventsOf(card.id, 'card.replaced'), [[c.id, at(60)]])
  assert.deepEqual(await eventsOf(card.id, 'card.closed'), [[c.id, at(60)]])
  assert.deepEqual(await eventsOf(fresh.id, 'card.created'), [[c.id, at(60)]])

  // Issuance waits on the clock: wall-time jobs leave the card pending; the advance issues it at the clock's time.
  await runJobs(t)
  assert.equal((await t.api(token, 'GET', `/v1/cards/${fresh.id}`)).json().status, 'pending')
  await advance(t, token, c.id, { by: 'PT1M' })
  const issued = (await t.api(token, 'GET', `/v1/cards/${fresh.id}`)).json()
  // CARD_ISSUE_DELAY_MS is 0 in the tests: due at the replacement's own instant on the clock.
  assert.deepEqual([issued.status, issued.updated_at], ['active', at(60)])
  assert.deepEqual(await eventsOf(fresh.id, 'card.issued'), [[c.id, at(60)]])
})

test('a new card under a clock is issued by its advance; its issue job never waits on wall time', async () => {
  const c = await clockAt(t, token, T0)
  const f = await fundedOnClock(t, tenant, token, c.id, 0)
  const res = await t.api(token, 'POST', '/v1/cards', cardBody(f.holder.id, f.account.id))
  assert.equal(res.statusCode, 201, res.body)
  const card = res.json()
  const job = await t.deps.db
    .selectFrom('jobs')
    .select(['state', 'clock_id', 'run_at'])
    .where('type', '=', 'card.issue')
    .where(sql<string>`payload->>'card_id'`, '=', card.id)
    .executeTakeFirstOrThrow()
  assert.deepEqual(
    [job.state, job.clock_id, new Date(job.run_at).toISOString()],
    ['on_clock', c.id, T0],
  )
  await runJobs(t)
  assert.equal((await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().status, 'pending')
  await advance(t, token, c.id, { by: 'PT1S' })
  const issued = (await t.api(token, 'GET', `/v1/cards/${card.id}`)).json()
  assert.deepEqual([issued.status, issued.updated_at], ['active', T0])
})

test('a card without a clock: frozen on wall time, its event without clock_id, issued by a wall-time job', async () => {
  const f = await fundedCard(t, tenant, token, 0)
  const before = Date.now()
  const frozen = await post(t, token, `/v1/cards/${f.card.id}/freeze`, {}, 200)
  assert.ok(new Date(frozen.updated_at).getTime() >= before - 1000, frozen.updated_at)
  const [event] = await storedEvents(t, f.card.id, 'card.frozen')
  assert.equal(event!.clock_id, null)

  const res = await t.api(token, 'POST', '/v1/cards', cardBody(f.holder.id, f.account.id))
  assert.equal(res.statusCode, 201, res.body)
  await runJobs(t)
  const issued = (await t.api(token, 'GET', `/v1/cards/${res.json().id}`)).json()
  assert.equal(issued.status, 'active')
  const [created] = await storedEvents(t, issued.id, 'card.issued')
  assert.equal(created!.clock_id, null)
})

test("a card's network tokens under a clock are on its time, deleted with the card at its time; events with clock_id", async () => {
  const c = await clockAt(t, token, T0)
  const { card } = await fundedOnClock(t, tenant, token, c.id, 0)
  await advance(t, token, c.id, { by: 'PT5M' })
  const tok = await post(
    t,
    token,
    '/v1/simulate/network_tokens',
    { card_id: card.id, wallet: 'apple_pay' },
    201,
  )
  assert.deepEqual([tok.status, tok.created_at, tok.activated_at], ['active', at(5), at(5)])
  await advance(t, token, c.id, { by: 'PT5M' })
  const suspended = await post(t, token, `/v1/network_tokens/${tok.id}/suspend`, {}, 200)
  assert.equal(suspended.updated_at, at(10))
  await advance(t, token, c.id, { by: 'PT5M' })
  await post(t, token, `/v1/cards/${card.id}/close`, {}, 200)
  const deleted = (await t.api(token, 'GET', `/v1/network_tokens/${tok.id}`)).json()
  assert.deepEqual([deleted.status, deleted.updated_at], ['deleted', at(15)])
  const events = await storedEvents(t, tok.id)
  assert.deepEqual(
    events.map((e) => [e.type, e.clock_id, e.object.status]),
    [
      ['network_token.created', c.id, 'requested'],
      ['network_token.updated', c.id, 'active'],
      ['network_token.updated', c.id, 'suspended'],
      ['network_token.updated', c.id, 'deleted'],
    ],
  )
})

test('a view of the details of a card under a clock emits card.details_viewed with clock_id', async () => {
  const c = await clockAt(t, token, T0)
  const { card } = await fundedOnClock(t, tenant, token, c.id, 0)
  const origin = 'https://app.example.com'
  const s = await post(
    t,
    token,
    `/v1/cards/${card.id}/reveal_sessions`,
    { target_origin: origin },
    201,
  )
  const page = await t.app.inject({
    method: 'GET',
    url: new URL(s.url).pathname,
    headers: {
      'sec-fetch-dest': 'iframe',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-site': 'cross-site',
      referer: `${origin}/cards/42`,
    },
  })
  assert.equal(page.statusCode, 200)
  const [viewed] = await storedEvents(t, card.id, 'card.details_viewed')
  assert.equal(viewed!.clock_id, c.id)
})

test("a card's travel mode under a clock is judged on the clock's time, by id and in lists", async () => {
  // A clock far behind wall time: on wall time the eSIM's validity has long ended.
  const F = '2026-02-01T00:00:00.000Z'
  await post(t, token, '/v1/simulate/esim/provisioning', { latency_ms: 0 }, 200)
  const c = await clockAt(t, token, F)
  const f = await fundedOnClock(t, tenant, token, c.id, 0)
  const pkg = await packageFor(t, token, 'country=FRA&region=local&status=on_sale')
  const order = await completedOrder(t, token, { package_id: pkg.id, cardholder_id: f.holder.id })
  const patched = await t.api(token, 'PATCH', `/v1/cards/${f.card.id}`, {
    travel_mode: { esim_id: order.esim_id },
  })
  assert.equal(patched.statusCode, 200, patched.body)
  assert.equal(patched.json().travel_mode.active, true)
  const activeOf = async () => [
    (await t.api(token, 'GET', `/v1/cards/${f.card.id}`)).json().travel_mode.active,
    (await t.api(token, 'GET', `/v1/cards?cardholder_id=${f.holder.id}`)).json().data[0].travel_mode
      .active,
  ]
  assert.deepEqual(await activeOf(), [true, true])
  await advance(t, token, c.id, { by: `P${pkg.validity_days + 1}D` })
  assert.deepEqual(await activeOf(), [false, false])
})
