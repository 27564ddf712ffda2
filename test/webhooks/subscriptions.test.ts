import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import { approvedCardholder } from '../accounts/support.js'
import {
  BASE_URL,
  createTenant,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { createEndpoint, emitEvent, startReceiver, type Receiver } from './helpers.js'

const CATALOGUE_URL = `${BASE_URL}/docs/guides/event-catalogue`

// enabled_events takes `*`, exact types and prefix wildcards (`card.*`); new events, replays and the refusals follow one rule.
describe('webhook subscriptions by type, prefix wildcard and *', () => {
  let t: TestApp
  let runner: JobRunner
  const receivers: Receiver[] = []

  before(async () => {
    t = await startTestApp()
    runner = new JobRunner(t.deps, t.jobs)
  })
  after(async () => {
    for (const r of receivers) await r.close()
    await t.close()
  })

  /** A tenant of its own (its events reach only its endpoints) and one receiving endpoint per subscription list. */
  async function subscribed(lists: Record<string, string[]>): Promise<{
    tenant: TestClient
    token: string
    endpoints: Record<string, { id: string; receiver: Receiver }>
  }> {
    const tenant = await createTenant(t)
    const token = await tenant.token()
    const endpoints: Record<string, { id: string; receiver: Receiver }> = {}
    for (const [name, events] of Object.entries(lists)) {
      const receiver = await startReceiver(`/${name}`)
      receivers.push(receiver)
      endpoints[name] = { id: (await createEndpoint(t, token, receiver.url, events)).id, receiver }
    }
    return { tenant, token, endpoints }
  }

  /** Event types each endpoint has deliveries of (queued by the statement that wrote the events), sorted. */
  async function deliveredTypes(endpointId: string): Promise<string[]> {
    const rows = await t.deps.db
      .selectFrom('webhook_deliveries')
      .innerJoin('events', 'events.id', 'webhook_deliveries.event_id')
      .select('events.type')
      .where('webhook_deliveries.endpoint_id', '=', endpointId)
      .execute()
    return rows.map((r) => r.type).sort()
  }

  test('an endpoint subscribed to card.* receives card events and not account.created; * receives everything', async () => {
    const { tenant, endpoints } = await subscribed({
      cards: ['card.*'],
      all: ['*'],
      exact: ['account.created'],
      esim: ['esim.*'],
    })
    const ids: Record<string, string> = {}
    for (const type of [
      'card.created',
      'account.created',
      'card.frozen',
      'cardholder.created',
      'esim_order.created',
      'esim.low_data',
    ] as const) {
      ids[type] = await emitEvent(t, tenant, type)
    }
    assert.deepEqual(await deliveredTypes(endpoints.cards.id), ['card.created', 'card.frozen'])
    assert.deepEqual(await deliveredTypes(endpoints.all.id), [
      'account.created',
      'card.created',
      'card.frozen',
      'cardholder.created',
      'esim.low_data',
      'esim_order.created',
    ])
    assert.deepEqual(await deliveredTypes(endpoints.exact.id), ['account.created'])
    assert.deepEqual(
      await deliveredTypes(endpoints.esim.id),
      ['esim.low_data'],
      'esim.* does not take esim_order events',
    )

    await runner.drain()
    const got = endpoints.cards.receiver.received
      .map((r) => [r.headers['svc-event-type'], r.body.id])
      .sort()
    assert.deepEqual(got, [
      ['card.created', ids['card.created']],
      ['card.frozen', ids['card.frozen']],
    ])
    assert.equal(endpoints.all.receiver.received.length, 6)
  })

  test('events written inside the statement that moves money reach endpoints subscribed by prefix too', async () => {
    const { tenant, token, endpoints } = await subscribed({
      accounts: ['account.*'],
      cards: ['card.*'],
    })
    const cardholder = await approvedCardholder(t, token)
    const opened = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: cardholder.id,
      currency: 'USD',
    })
    assert.equal(opened.statusCode, 201, opened.body)
    const credit = await t.api(token, 'POST', `/v1/accounts/${opened.json().id}/credit`, {
      amount: 2500,
      client_transaction_id: 'wild-1',
    })
    assert.equal(credit.statusCode, 200, credit.body)
    const types = await deliveredTypes(endpoints.accounts.id)
    assert.ok(types.includes('account.created'), types.join())
    assert.ok(types.includes('account.credited'), types.join())
    assert.deepEqual(await deliveredTypes(endpoints.cards.id), [])
  })

  test('an unknown prefix, a bare prefix or an unknown type is refused naming the item and the catalogue page', async () => {
    const tenant = await createTenant(t)
    const token = await tenant.token()
    const create = (enabled_events: unknown[]) =>
      t.api(token, 'POST', '/v1/webhook_endpoints', {
        url: 'https://hooks.example.com/w',
        enabled_events,
      })
    for (const [bad, hint] of [
      ['cardz.*', 'Unknown event type "cardz.*"'],
      ['card', '"card" is not an event type: use "card.*"'],
      ['card.teleported', 'Unknown event type'],
      ['card.**', 'Unknown event type'],
      ['*.*', 'Unknown event type'],
      ['CARD.*', 'Unknown event type'],
      ['.*', 'Unknown event type'],
    ] as const) {
      const res = await create(['card.created', bad])
      assert.equal(res.statusCode, 400, bad)
      const { error } = res.json()
      assert.equal(error.code, 'invalid_parameter', bad)
      assert.equal(error.param, 'enabled_events[1]', bad)
      assert.ok(error.message.includes(hint), `${bad}: ${error.message}`)
      assert.ok(error.message.includes(CATALOGUE_URL), `${bad}: ${error.message}`)
    }
    const ok = await create(['card.*', 'esim_order.*', 'account.created', 'card.*'])
    assert.equal(ok.statusCode, 201, ok.body)
    assert.deepEqual(
      ok.json().enabled_events,
      ['card.*', 'esim_order.*', 'account.created'],
      'duplicates are dropped',
    )

    const patched = await t.api(token, 'PATCH', `/v1/webhook_endpoints/${ok.json().id}`, {
      enabled_events: ['cardholder.*', '*'],
    })
    assert.equal(patched.statusCode, 200, patched.body)
    assert.deepEqual(patched.json().enabled_events, ['cardholder.*', '*'])
    const refused = await t.api(token, 'PATCH', `/v1/webhook_endpoints/${ok.json().id}`, {
      enabled_events: ['cardz.*'],
    })
    assert.equal(refused.statusCode, 400)
    assert.equal(refused.json().error.param, 'enabled_events[0]')
    assert.ok(refused.json().error.message.includes(CATALOGUE_URL))
    const kept = (await t.api(token, 'GET', `/v1/webhook_endpoints/${ok.json().id}`)).json()
    assert.deepEqual(kept.enabled_events, ['cardholder.*', '*'], 'a refused PATCH changes nothing')
  })

  test('replays follow the same rule: an event goes to the endpoints whose list takes it, an endpoint gets the events its list takes', async () => {
    const { tenant, endpoints } = await subscribed({
      cards: ['card.*'],
      accounts: ['account.created'],
      all: ['*'],
    })
    const since = t.clock.now().toISOString()
    const cardEvent = await emitEvent(t, tenant, 'card.issued')
    const accountEvent = await emitEvent(t, tenant, 'account.created')
    await emitEvent(t, tenant, 'cardholder.updated')
    await emitEvent(t, tenant, 'card.closed')
    await runner.drain()

    const one = await t.operator('POST', `/operator/v1/events/${cardEvent}/replay`, {})
    assert.deepEqual(
      [...one.webhook_endpoint_ids].sort(),
      [endpoints.cards.id, endpoints.all.id].sort(),
    )
    const other = await t.operator('POST', `/operator/v1/events/${accountEvent}/replay`, {})
    assert.deepEqual(
      [...other.webhook_endpoint_ids].sort(),
      [endpoints.accounts.id, endpoints.all.id].sort(),
    )

    const cards = await t.operator(
      'POST',
      `/operator/v1/webhook_endpoints/${endpoints.cards.id}/replay`,
      { since },
    )
    assert.equal(cards.queued, 2, 'card.issued and card.closed')
    const accounts = await t.operator(
      'POST',
      `/operator/v1/webhook_endpoints/${endpoints.accounts.id}/replay`,
      { since },
    )
    assert.equal(accounts.queued, 1)
    const all = await t.operator(
      'POST',
      `/operator/v1/webhook_endpoints/${endpoints.all.id}/replay`,
      { since },
    )
    assert.equal(all.queued, 4)

    endpoints.cards.receiver.received.length = 0
    await runner.drain()
    const replayed = endpoints.cards.receiver.received
      .map((r) => r.headers['svc-event-type'])
      .sort()
    assert.deepEqual(
      replayed,
      ['card.closed', 'card.issued'],
      'the event replay and the endpoint replay of card.issued share one queued delivery',
    )
  })
})
