import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { withTx } from '../../src/db/tx.js'
import { emit } from '../../src/modules/events/emit.js'
import {
  BASE_URL,
  createTenant,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { emitEvent } from '../webhooks/helpers.js'

describe('events API', () => {
  let t: TestApp
  let tenant: TestClient
  let stranger: TestClient
  let production: TestClient

  before(async () => {
    t = await startTestApp()
    tenant = await createTenant(t, { scopes: ['cards:read', 'cardholders:read'] })
    stranger = await createTenant(t)
    production = await createTenant(t, {
      environment: 'production',
      organizationId: tenant.organizationId,
    })
  })
  after(async () => {
    await t.close()
  })

  const get = async (who: TestClient, url: string) => t.api(await who.token(), 'GET', url)

  test('an emitted event is readable with the scope of its object, in the interface shape', async () => {
    const object = {
      id: 'chd_1',
      object: 'cardholder',
      email: 'a@example.com',
      zeta_last_but_long_name: true,
      nested: { k: [1, 2] },
    }
    const id = await emitEvent(t, tenant, 'cardholder.created', object)
    const res = await get(tenant, `/v1/events/${id}`)
    assert.equal(res.statusCode, 200)
    const event = res.json()
    assert.deepEqual(Object.keys(event).sort(), [
      'api_version',
      'created_at',
      'data',
      'environment',
      'id',
      'object',
      'type',
    ])
    assert.match(event.id, /^evt_[0-9A-Z]{26}$/)
    assert.equal(event.object, 'event')
    assert.equal(event.type, 'cardholder.created')
    assert.equal(event.api_version, '2026-11-01')
    assert.equal(event.environment, 'sandbox')
    assert.match(event.created_at, /Z$/)
    assert.deepEqual(event.data, { object })
    assert.deepEqual(
      Object.keys(event.data.object),
      Object.keys(object),
      'the object keeps its REST field order',
    )
  })

  test("another organization's event answers 404 event_not_found; the other environment's answers environment_mismatch", async () => {
    const id = await emitEvent(t, tenant, 'card.created')
    const foreign = await get(stranger, `/v1/events/${id}`)
    assert.equal(foreign.statusCode, 404)
    assert.equal(foreign.json().error.code, 'event_not_found')
    assert.equal(foreign.json().error.type, 'invalid_request_error')
    const mixed = await get(production, `/v1/events/${id}`)
    assert.equal(mixed.statusCode, 403)
    assert.equal(mixed.json().error.code, 'environment_mismatch')
    const unknown = await get(tenant, '/v1/events/evt_nope')
    assert.equal(unknown.json().error.code, 'event_not_found')
    const list = (await get(stranger, '/v1/events')).json()
    assert.ok(!list.data.some((e: any) => e.id === id))
  })

  test('a rolled-back transaction emits nothing', async () => {
    let emitted = ''
    await assert.rejects(
      withTx(t.deps.db, async (trx) => {
        emitted = await emit(
          trx,
          { organizationId: tenant.organizationId, environment: 'sandbox' },
          'card.closed',
          { id: 'card_rb' },
          t.clock.now(),
        )
        throw new Error('the change failed')
      }),
    )
    assert.equal((await get(tenant, `/v1/events/${emitted}`)).statusCode, 404)
    const list = (await get(tenant, '/v1/events?type=card.closed')).json()
    assert.equal(list.data.length, 0)
  })

  test('the list is newest first, filters by type and creation time, and paginates with cursors', async () => {
    const org = await createTenant(t)
    const ids: string[] = []
    // Start half-way through a second, so the whole-second filter below is not crossed by the real time the emits take.
    t.clock.advance(1500 - (t.clock.now().getTime() % 1000))
    const start = t.clock.now()
    for (let i = 0; i < 5; i++) {
      ids.push(
        await emitEvent(t, org, i % 2 ? 'card.frozen' : 'card.unfrozen', { id: `card_${i}` }),
      )
      t.clock.advance(1000)
    }
    const all = (await get(org, '/v1/events')).json()
    assert.equal(all.object, 'list')
    assert.equal(all.url, '/v1/events')
    assert.deepEqual(
      all.data.map((e: any) => e.id),
      [...ids].reverse(),
    )

    const frozen = (await get(org, '/v1/events?type=card.frozen')).json()
    assert.deepEqual(
      frozen.data.map((e: any) => e.id),
      [ids[3], ids[1]],
    )
    const cards = (await get(org, '/v1/events?type=card.*')).json()
    assert.equal(cards.data.length, 5)

    const from = new Date(start.getTime() + 1500).toISOString()
    const to = new Date(start.getTime() + 3500).toISOString()
    const windowed = (await get(org, `/v1/events?created[gte]=${from}&created[lte]=${to}`)).json()
    assert.deepEqual(
      windowed.data.map((e: any) => e.id),
      [ids[3], ids[2]],
    )
    const unix = Math.ceil((start.getTime() + 3000) / 1000)
    const after = (await get(org, `/v1/events?created[gt]=${unix}`)).json()
    assert.deepEqual(
      after.data.map((e: any) => e.id),
      [ids[4]],
    )

    const page1 = (await get(org, '/v1/events?limit=2')).json()
    assert.equal(page1.has_more, true)
    const page2 = (
      await get(org, `/v1/events?limit=2&starting_after=${encodeURIComponent(page1.next_cursor)}`)
    ).json()
    const page3 = (
      await get(org, `/v1/events?limit=2&starting_after=${encodeURIComponent(page2.next_cursor)}`)
    ).json()
    assert.equal(page3.has_more, false)
    assert.equal(page3.next_cursor, null)
    assert.deepEqual(
      [...page1.data, ...page2.data, ...page3.data].map((e: any) => e.id),
      [...ids].reverse(),
    )
  })

  test('the type filter takes the forms enabled_events takes: *, exact types and prefix wildcards', async () => {
    const org = await createTenant(t)
    for (const type of [
      'card.created',
      'esim_order.created',
      'esim.depleted',
      'account.created',
    ] as const)
      await emitEvent(t, org, type)
    const of = async (type: string) =>
      (await get(org, `/v1/events?type=${encodeURIComponent(type)}`))
        .json()
        .data.map((e: any) => e.type)
        .sort()
    assert.deepEqual(await of('*'), [
      'account.created',
      'card.created',
      'esim.depleted',
      'esim_order.created',
    ])
    assert.deepEqual(await of('esim.*'), ['esim.depleted'], 'a prefix wildcard stops at the dot')
    assert.deepEqual(await of('esim_order.*'), ['esim_order.created'])
    assert.deepEqual(await of('account.created'), ['account.created'])
    for (const bad of ['cardz.*', 'card', 'card.teleported', '*.*']) {
      const res = await get(org, `/v1/events?type=${encodeURIComponent(bad)}`)
      assert.equal(res.statusCode, 400, bad)
      assert.equal(res.json().error.code, 'invalid_parameter', bad)
      assert.equal(res.json().error.param, 'type', bad)
      assert.ok(
        res.json().error.message.includes(`${BASE_URL}/docs/guides/event-catalogue`),
        res.json().error.message,
      )
    }
  })

  test('bad filters answer 400 with the parameter named', async () => {
    const bad = await get(tenant, '/v1/events?created[gte]=yesterday')
    assert.equal(bad.statusCode, 400)
    assert.equal(bad.json().error.code, 'invalid_parameter')
    assert.equal(bad.json().error.param, 'created[gte]')
    for (const impossible of ['2026-02-30', '2026-02-29T00:00:00Z', '2026-04-31', '2026-00-10']) {
      const res = await get(tenant, `/v1/events?created[gt]=${impossible}`)
      assert.equal(res.statusCode, 400, impossible)
      assert.equal(res.json().error.param, 'created[gt]')
    }
    assert.equal((await get(tenant, '/v1/events?created[gt]=2028-02-29')).statusCode, 200)
    const unknown = await get(tenant, '/v1/events?color=red')
    assert.equal(unknown.json().error.code, 'unknown_parameter')
    const tooMany = await get(tenant, '/v1/events?limit=101')
    assert.equal(tooMany.json().error.code, 'invalid_parameter')
  })

  test('events older than 30 days are no longer readable', async () => {
    const id = await emitEvent(t, tenant, 'card.expired')
    assert.equal((await get(tenant, `/v1/events/${id}`)).statusCode, 200)
    t.clock.advance(30 * 24 * 3600_000 + 60_000)
    const res = await get(tenant, `/v1/events/${id}`)
    assert.equal(res.statusCode, 404)
    assert.equal(res.json().error.code, 'event_not_found')
    const list = (await get(tenant, '/v1/events?type=card.expired')).json()
    assert.equal(list.data.length, 0)
  })

  test('events need a valid token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/events' })
    assert.equal(res.statusCode, 401)
    assert.equal(res.json().error.code, 'missing_credentials')
  })
})
