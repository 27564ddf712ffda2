import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { EVENT_OBJECTS, EVENT_TYPES, eventScope } from '../../src/modules/events/index.js'
import { SCOPES } from '../../src/modules/oauth/scopes.js'
import {
  createTenant,
  listenOnPort,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { makeCardholder } from '../cards/support.js'
import { events, openStream, type Opened } from '../events/sse-client.js'
import { createEndpoint, emitEvent } from '../webhooks/helpers.js'
import { recordRoutes } from './support.js'

// The attack: a token holding only esim:read read cardholders' names, emails, phones and addresses through the
// cardholder.* events (list, one event, stream) while GET /v1/cardholders/{id} answered it 403. Each event is now read
// with the scope of its object, in the list, one event, the stream and replays, over the real API and a real port.

const recorder = recordRoutes()
let t: TestApp
let baseUrl: string
let a: TestClient
let full: string
let esimOnly: string
let holdersOnly: string
let holder: any
let holderEvent: string
let esimEvent: string
const streams: Opened[] = []

before(async () => {
  t = await startTestApp({
    env: { EVENT_STREAM_POLL_MS: '50', EVENT_STREAM_LIFETIME_MS: '60000' },
    modules: recorder.modules,
  })
  baseUrl = await listenOnPort(t)
  a = await createTenant(t)
  ;[full, esimOnly, holdersOnly] = await Promise.all([
    a.token(),
    a.token('esim:read'),
    a.token('cardholders:read'),
  ])
  holder = await makeCardholder(t, full, { kyc: 'none' })
  holderEvent = (await t.api(full, 'GET', '/v1/events?type=cardholder.created')).json().data[0].id
  esimEvent = await emitEvent(t, a, 'esim.low_data', { id: 'esim_1', object: 'esim' })
})
after(async () => {
  for (const s of streams) s.close()
  await t.close()
})

const get = (token: string, url: string) => t.api(token, 'GET', url)

type Answer = { statusCode: number; body: string; json(): any }

function assertScopeRefusal(res: Answer, scope: string, param?: string): void {
  assert.equal(res.statusCode, 403, res.body)
  const { error } = res.json()
  assert.equal(error.code, 'insufficient_scope')
  assert.equal(error.param, param)
  assert.ok(error.message.includes(scope), error.message)
}

describe('the catalogue names the scope of each type', () => {
  test("each object's scope is the scope its own GET route declares, and every type has one", () => {
    const routes = new Map(recorder.routes.map((r) => [`${r.method} ${r.url}`, r.scope]))
    for (const [object, spec] of Object.entries(EVENT_OBJECTS)) {
      const route = spec.retrieve.replace(/\{([a-z_]+)\}/g, ':$1')
      assert.ok(routes.has(route), `${object}: ${spec.retrieve} is not a route`)
      assert.equal(
        routes.get(route),
        spec.scope,
        `${object}: ${spec.retrieve} needs ${routes.get(route)}`,
      )
    }
    for (const type of EVENT_TYPES)
      assert.ok((SCOPES as readonly string[]).includes(eventScope(type)), type)
  })
})

describe('events are read with the scope of their object', () => {
  test('the list: an esim:read token sees eSIM events and no cardholder event (nor its email); a cardholders:read token the reverse', async () => {
    assertScopeRefusal(await get(esimOnly, `/v1/cardholders/${holder.id}`), 'cardholders:read')
    const esimList = await get(esimOnly, '/v1/events?limit=100')
    assert.equal(esimList.statusCode, 200)
    assert.deepEqual(
      esimList.json().data.map((e: any) => e.id),
      [esimEvent],
    )
    assert.ok(
      !esimList.body.includes(holder.email),
      "the cardholder's email reached an esim:read token",
    )
    assert.deepEqual(
      (await get(esimOnly, '/v1/events?type=*')).json().data.map((e: any) => e.id),
      [esimEvent],
    )
    assert.deepEqual(
      (await get(esimOnly, '/v1/events?type=esim.*')).json().data.map((e: any) => e.id),
      [esimEvent],
    )

    const holderList = (await get(holdersOnly, '/v1/events?limit=100')).json().data
    const types = holderList.map((e: any) => e.type)
    assert.ok(
      types.length > 0 && types.every((type: string) => type.startsWith('cardholder.')),
      JSON.stringify(types),
    )
    assert.equal(holderList.find((e: any) => e.id === holderEvent).data.object.email, holder.email)
    // A token with every scope reads both, as before.
    const all = (await get(full, '/v1/events?limit=100')).json().data.map((e: any) => e.id)
    assert.ok(all.includes(esimEvent) && all.includes(holderEvent))
  })

  test('a type filter naming types the token does not read answers 403 insufficient_scope naming the scope', async () => {
    for (const form of ['cardholder.*', 'cardholder.created']) {
      assertScopeRefusal(await get(esimOnly, `/v1/events?type=${form}`), 'cardholders:read', 'type')
    }
    assertScopeRefusal(
      await get(holdersOnly, '/v1/events?type=esim_order.created'),
      'esim:read',
      'type',
    )
    // A cards:write token holds no cards:read: writing an object does not read it.
    assertScopeRefusal(
      await get(await a.token('cards:write'), '/v1/events?type=card.*'),
      'cards:read',
      'type',
    )
  })

  test('one event of a type the token does not read answers 403 insufficient_scope, without the object', async () => {
    const refused = await get(esimOnly, `/v1/events/${holderEvent}`)
    assertScopeRefusal(refused, 'cardholders:read')
    assert.ok(!refused.body.includes(holder.email))
    assert.equal((await get(esimOnly, `/v1/events/${esimEvent}`)).statusCode, 200)
    const read = await get(holdersOnly, `/v1/events/${holderEvent}`)
    assert.equal(read.statusCode, 200)
    assert.equal(read.json().data.object.email, holder.email)
    // A missing event still answers as before, whoever asks.
    const missing = await get(esimOnly, '/v1/events/evt_01JD3R2B4C6D8E0F2G4H6J8K0M')
    assert.equal(missing.json().error.code, 'event_not_found')
  })

  test('pages of a token that reads some types only follow their cursors over the readable types alone, newest first', async () => {
    const b = await createTenant(t)
    const esims: string[] = []
    const others: string[] = []
    for (let i = 0; i < 5; i++) {
      await emitEvent(t, b, 'cardholder.updated', { id: `chd_${i}`, object: 'cardholder' })
      const type = i % 2 ? 'esim_order.created' : 'esim.depleted'
      esims.push(await emitEvent(t, b, type, { id: `esim_${i}`, object: 'esim' }))
      others.push(
        esims[i],
        await emitEvent(t, b, 'card.frozen', { id: `card_${i}`, object: 'card' }),
      )
    }
    // Then more cardholder events than two pages hold: a token without cardholders:read finds none of its own there.
    for (let i = 0; i < 8; i++) {
      await emitEvent(t, b, 'cardholder.kyc_updated', { id: `chd_k${i}`, object: 'cardholder' })
    }
    const walk = async (token: string) => {
      const seen: string[] = []
      let cursor = ''
      do {
        const res = (await get(token, `/v1/events?limit=2${cursor}`)).json()
        seen.push(...res.data.map((e: any) => e.id))
        cursor = res.next_cursor ? `&starting_after=${encodeURIComponent(res.next_cursor)}` : ''
      } while (cursor)
      return seen
    }
    // esim:read alone: the eSIM types' ranges; every scope but cardholders:read: past the cardholder events.
    assert.deepEqual(await walk(await b.token('esim:read')), [...esims].reverse())
    const allButHolders = SCOPES.filter(
      (s) => s !== 'cardholders:read' && !s.startsWith('authentications'),
    ).join(' ')
    assert.deepEqual(await walk(await b.token(allButHolders)), [...others].reverse())
  })

  test('the stream (a real SSE client): esim:read receives the eSIM event only, cardholders:read the cardholder with its email', async () => {
    const esimStream = await openStream(baseUrl, esimOnly)
    const holderStream = await openStream(baseUrl, holdersOnly)
    streams.push(esimStream, holderStream)
    assert.equal(esimStream.status, 200)
    await esimStream.waitFor((m) => m.some((x) => x.id))
    await holderStream.waitFor((m) => m.some((x) => x.id))
    const position = esimStream.messages.find((x) => x.id)!.id!
    const created = await makeCardholder(t, full, { kyc: 'none' })
    const esimLive = await emitEvent(t, a, 'esim.depleted', { id: 'esim_2', object: 'esim' })
    await esimStream.waitFor((m) => events(m).some((x) => x.id === esimLive))
    await holderStream.waitFor((m) => events(m).some((x) => x.data!.includes(created.email)))
    await new Promise((r) => setTimeout(r, 300))
    assert.deepEqual(
      events(esimStream.messages).map((m) => m.event),
      ['esim.depleted'],
    )
    assert.ok(!esimStream.messages.some((m) => m.data?.includes(created.email)))
    assert.ok(events(holderStream.messages).every((m) => m.event!.startsWith('cardholder.')))
    // Resuming from before both events: still no cardholder event.
    const resumed = await openStream(baseUrl, esimOnly, '', { 'last-event-id': position })
    streams.push(resumed)
    await resumed.waitFor((m) => events(m).some((x) => x.id === esimLive))
    assert.deepEqual(
      events(resumed.messages).map((m) => m.id),
      [esimLive],
    )
  })

  test('a stream asking for types the token does not read answers 403 insufficient_scope before it opens', async () => {
    for (const types of ['cardholder.*', 'esim.*,card.created']) {
      const refused = await openStream(baseUrl, esimOnly, `?types=${types}`)
      assert.equal(refused.status, 403)
      assert.equal(refused.body.error.code, 'insufficient_scope')
      assert.equal(refused.body.error.param, 'types')
    }
  })

  test('replays: one event needs its scope too; an endpoint replay sends only the types the token reads', async () => {
    const c = await createTenant(t)
    const owner = await c.token()
    const endpoint = await createEndpoint(t, owner, 'http://127.0.0.1:9/hook', ['*'])
    const since = t.clock.now().toISOString()
    const holderIds = [
      await emitEvent(t, c, 'cardholder.created', { id: 'chd_c1', object: 'cardholder' }),
      await emitEvent(t, c, 'cardholder.updated', { id: 'chd_c2', object: 'cardholder' }),
    ]
    for (let i = 0; i < 3; i++)
      await emitEvent(t, c, 'esim.topped_up', { id: `esim_c${i}`, object: 'esim' })
    const esimHooks = await c.token('esim:read webhooks:write')
    const holderHooks = await c.token('cardholders:read webhooks:write')

    assertScopeRefusal(
      await t.api(esimHooks, 'POST', `/v1/events/${holderIds[0]}/replay`, {}),
      'cardholders:read',
    )
    const one = await t.api(holderHooks, 'POST', `/v1/events/${holderIds[0]}/replay`, {})
    assert.equal(one.statusCode, 200, one.body)
    assert.equal(one.json().queued, 1)

    const replay = (token: string) =>
      t.api(token, 'POST', `/v1/webhook_endpoints/${endpoint.id}/replay`, { since })
    assert.equal((await replay(esimHooks)).json().queued, 3)
    assert.equal((await replay(holderHooks)).json().queued, 2)
    assert.equal((await replay(owner)).json().queued, 5)
  })
})
