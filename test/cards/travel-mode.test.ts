/**
 * Travel mode (docs/cards.md, "Travel mode"): a card following an eSIM of its cardholder may also spend in the eSIM's
 * current country while the eSIM's bundle is valid. Blocked countries still decline; a suspended or expired eSIM, or
 * one that moved on, no longer widens the card; an eSIM of another cardholder is refused.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  expectApproved,
  expectDecline,
  fundedCard,
  MERCHANT,
  type Funded,
} from '../authorizations/support.js'
import { eventsFor, expectError } from '../helpers/api.js'
import { cardBody, makeAccount, makeCardholder } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
let pkg: any

const DAY = 24 * 3_600_000

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
  token = await tenant.token()
  const sim = await t.api(token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })
  assert.equal(sim.statusCode, 200, sim.body)
  const res = await t.api(token, 'GET', '/v1/esim/packages?country=FRA&region=local&limit=100')
  pkg = res.json().data.find((p: any) => p.data_mb !== null)
  assert.ok(pkg, 'a package for France')
})
after(() => t.close())

const api = (method: string, url: string, body?: unknown) => t.api(token, method, url, body)
const inCountry = (country: string) => ({ merchant: { ...MERCHANT, country } })

async function esimOf(cardholderId: string): Promise<string> {
  const res = await api('POST', '/v1/esim/orders', {
    package_id: pkg.id,
    cardholder_id: cardholderId,
    reference: `travel-${Math.random().toString(36).slice(2)}`,
  })
  assert.equal(res.statusCode, 201, res.body)
  assert.equal(res.json().status, 'completed', res.body)
  return res.json().esim_id
}

async function locate(esimId: string, country: string): Promise<void> {
  const res = await api('POST', `/v1/simulate/esim/esims/${esimId}/location`, { country })
  assert.equal(res.statusCode, 200, res.body)
}

async function travelMode(cardId: string, travel: unknown): Promise<any> {
  const res = await api('PATCH', `/v1/cards/${cardId}`, { travel_mode: travel })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

/** A funded card (allowed in the USA only, by default), with travel mode on a fresh eSIM of its cardholder. */
async function travellingCard(
  controls: Record<string, unknown> = { allowed_countries: ['USA'] },
): Promise<Funded & { esimId: string }> {
  const f = await fundedCard(t, tenant, token, 100_000, { spending_controls: controls })
  const esimId = await esimOf(f.holder.id)
  await travelMode(f.card.id, { esim_id: esimId })
  return { ...f, esimId }
}

describe('travel mode', () => {
  test("the eSIM's country is allowed while it is there: FRA approves, then declines once it moves on", async () => {
    const f = await fundedCard(t, tenant, token, 100_000, {
      spending_controls: { allowed_countries: ['USA'] },
    })
    const esimId = await esimOf(f.holder.id)
    await expectDecline(t, token, f.card.id, 100, 'country_blocked', inCountry('FRA'))

    const card = await travelMode(f.card.id, { esim_id: esimId })
    assert.deepEqual(card.travel_mode, { esim_id: esimId, country: null, active: true })
    assert.deepEqual(
      card.spending_controls.allowed_countries,
      ['USA'],
      'the controls are unchanged',
    )
    const updated = await eventsFor(t, f.card.id, 'card.updated')
    assert.equal(updated.length, 1)
    assert.deepEqual(updated[0].object.travel_mode, card.travel_mode)

    await locate(esimId, 'FRA')
    const shown = (await api('GET', `/v1/cards/${f.card.id}`)).json()
    assert.deepEqual(shown.travel_mode, { esim_id: esimId, country: 'FRA', active: true })
    await expectApproved(t, token, f.card.id, 100, inCountry('FRA'))
    await expectApproved(t, token, f.card.id, 100, inCountry('USA'))
    await expectDecline(t, token, f.card.id, 100, 'country_blocked', inCountry('DEU'))

    await locate(esimId, 'DEU')
    await expectDecline(t, token, f.card.id, 100, 'country_blocked', inCountry('FRA'))
    await expectApproved(t, token, f.card.id, 100, inCountry('DEU'))

    // Off again: only the card's own list.
    assert.equal((await travelMode(f.card.id, null)).travel_mode, null)
    await expectDecline(t, token, f.card.id, 100, 'country_blocked', inCountry('DEU'))
    assert.equal((await eventsFor(t, f.card.id, 'card.updated')).length, 2)
  })

  test('a blocked country still declines, wherever the eSIM is; a card without allowed countries is unaffected', async () => {
    // A card lists allowed or blocked countries, never both: blocked ones are never widened.
    const f = await travellingCard({ blocked_countries: ['FRA'] })
    await locate(f.esimId, 'FRA')
    const card = (await api('GET', `/v1/cards/${f.card.id}`)).json()
    assert.deepEqual(card.travel_mode, { esim_id: f.esimId, country: 'FRA', active: true })
    await expectDecline(t, token, f.card.id, 100, 'country_blocked', inCountry('FRA'))
    await expectApproved(t, token, f.card.id, 100, inCountry('DEU'))
  })

  test('a suspended eSIM no longer widens the card; resumed, it does again', async () => {
    const f = await travellingCard()
    await locate(f.esimId, 'FRA')
    await expectApproved(t, token, f.card.id, 100, inCountry('FRA'))
    assert.equal((await api('POST', `/v1/esim/esims/${f.esimId}/suspend`, {})).statusCode, 200)
    const card = (await api('GET', `/v1/cards/${f.card.id}`)).json()
    assert.deepEqual(card.travel_mode, { esim_id: f.esimId, country: 'FRA', active: false })
    await expectDecline(t, token, f.card.id, 100, 'country_blocked', inCountry('FRA'))
    assert.equal((await api('POST', `/v1/esim/esims/${f.esimId}/resume`, {})).statusCode, 200)
    await expectApproved(t, token, f.card.id, 100, inCountry('FRA'))
  })

  test('a canceled eSIM no longer widens the card; a replacement card keeps its travel mode', async () => {
    const f = await travellingCard()
    const replaced = await api('POST', `/v1/cards/${f.card.id}/replace`, { reason: 'damaged' })
    assert.equal(replaced.statusCode, 201, replaced.body)
    assert.equal(replaced.json().travel_mode.esim_id, f.esimId)
    // Never installed, nothing used: it may be canceled.
    assert.equal((await api('POST', `/v1/esim/esims/${f.esimId}/cancel`, {})).statusCode, 200)
    for (const id of [f.card.id, replaced.json().id]) {
      const card = (await api('GET', `/v1/cards/${id}`)).json()
      assert.deepEqual(card.travel_mode, { esim_id: f.esimId, country: null, active: false })
    }
  })

  test('on create: a card may start in travel mode; an eSIM of another cardholder is refused there too', async () => {
    const holder = await makeCardholder(t, token)
    const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
    const own = await esimOf(holder.id)
    await locate(own, 'ITA')
    const body = cardBody(holder.id, account.id, {
      spending_controls: { allowed_countries: ['USA'] },
    })
    const stranger = await makeCardholder(t, token)
    expectError(
      await api('POST', '/v1/cards', {
        ...body,
        travel_mode: { esim_id: await esimOf(stranger.id) },
      }),
      400,
      'invalid_parameter',
      'travel_mode.esim_id',
    )
    const res = await api('POST', '/v1/cards', { ...body, travel_mode: { esim_id: own } })
    assert.equal(res.statusCode, 201, res.body)
    assert.deepEqual(res.json().travel_mode, { esim_id: own, country: 'ITA', active: true })
  })

  test('an eSIM of another cardholder is 400 naming travel_mode.esim_id; an unknown one is esim_not_found', async () => {
    const f = await fundedCard(t, tenant, token, 0, {
      spending_controls: { allowed_countries: ['USA'] },
    })
    const stranger = await makeCardholder(t, token)
    const theirs = await esimOf(stranger.id)
    const patch = (esim_id: string) =>
      api('PATCH', `/v1/cards/${f.card.id}`, { travel_mode: { esim_id } })
    expectError(await patch(theirs), 400, 'invalid_parameter', 'travel_mode.esim_id')
    expectError(
      await patch('esim_01JD3QG2H9Z8Y7X6W5V4T3S2R1'),
      404,
      'esim_not_found',
      'travel_mode.esim_id',
    )
    // Another organization's eSIM answers like a missing one.
    const other = await createTenant(t)
    const otherToken = await other.token()
    await t.api(otherToken, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })
    const otherHolder = await makeCardholder(t, otherToken)
    const foreign = await t.api(otherToken, 'POST', '/v1/esim/orders', {
      package_id: pkg.id,
      cardholder_id: otherHolder.id,
      reference: 'travel-foreign',
    })
    assert.equal(foreign.statusCode, 201, foreign.body)
    expectError(await patch(foreign.json().esim_id), 404, 'esim_not_found', 'travel_mode.esim_id')
    assert.equal((await api('GET', `/v1/cards/${f.card.id}`)).json().travel_mode, null)
    assert.equal((await eventsFor(t, f.card.id, 'card.updated')).length, 0)
  })

  test("once the eSIM's validity has ended, its country declines again (and the card shows it inactive)", async () => {
    const f = await travellingCard()
    await locate(f.esimId, 'FRA')
    await expectApproved(t, token, f.card.id, 100, inCountry('FRA'))
    const esim = (await api('GET', `/v1/esim/esims/${f.esimId}`)).json()
    const left = new Date(esim.valid_until).getTime() - t.clock.now().getTime()
    t.clock.advance(left + DAY)
    try {
      // A token minted now (the clock moved past the first one's lifetime).
      const later = await tenant.token()
      await expectDecline(t, later, f.card.id, 100, 'country_blocked', inCountry('FRA'))
      const card = (await t.api(later, 'GET', `/v1/cards/${f.card.id}`)).json()
      assert.equal(card.travel_mode.active, false)
      await expectApproved(t, later, f.card.id, 100, inCountry('USA'))
    } finally {
      t.clock.reset()
    }
  })
})
