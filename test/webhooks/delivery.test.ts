import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import Stripe from 'stripe'
import { withTx } from '../../src/db/tx.js'
import { JobRunner } from '../../src/jobs/runner.js'
import { emit } from '../../src/modules/events/emit.js'
import { verifyWebhook } from '../../src/lib/webhook-signature.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { createEndpoint, emitEvent, startReceiver, type Receiver } from './helpers.js'

// Retries 10 s, 20 s, 30 s after each failure; an overridden schedule gives up at its sum (60 s).
const SCHEDULE = [10, 20, 30]

describe('webhook delivery', () => {
  let t: TestApp
  let tenant: TestClient
  let runner: JobRunner
  let receiver: Receiver

  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: SCHEDULE.join(',') } })
    tenant = await createTenant(t)
    runner = new JobRunner(t.deps, t.jobs)
    receiver = await startReceiver()
  })
  after(async () => {
    await receiver.close()
    await t.close()
  })

  /** The API with a fresh token: tests move the clock past token lifetimes. */
  const api = async (method: string, url: string, body?: unknown) =>
    t.api(await tenant.token(), method, url, body)

  /** Signatures carry the service clock, which the tests move. */
  const nowSec = () => Math.floor(t.clock.now().getTime() / 1000)

  /** Each test starts with a fresh receiver behaviour and its own endpoints. */
  async function freshEndpoint(events: string[] = ['*'], url = receiver.url): Promise<any> {
    receiver.received.length = 0
    receiver.respond = () => 200
    const list = await api('GET', '/v1/webhook_endpoints?limit=100')
    for (const ep of list.json().data) await api('DELETE', `/v1/webhook_endpoints/${ep.id}`)
    return createEndpoint(t, await tenant.token(), url, events)
  }

  test('a delivery carries the stored event as JSON with the headers and a signature that verifies', async () => {
    const ep = await freshEndpoint()
    const eventId = await emitEvent(t, tenant, 'cardholder.created', {
      id: 'chd_x',
      object: 'cardholder',
      email: 'a@b.c',
    })
    assert.equal(await runner.drain(), 1)
    assert.equal(receiver.received.length, 1)
    const got = receiver.received[0]
    assert.equal(got.headers['content-type'], 'application/json')
    assert.equal(got.headers['svc-event-id'], eventId)
    assert.equal(got.headers['svc-event-type'], 'cardholder.created')
    assert.equal(got.headers['svc-delivery-attempt'], '1')
    assert.match(String(got.headers['svc-signature']), /^t=\d+,v1=[0-9a-f]{64}$/)
    assert.equal(
      verifyWebhook(got.raw, got.headers['svc-signature'] as string, ep.secret, 300, nowSec()),
      true,
    )
    assert.equal(
      verifyWebhook(got.raw, got.headers['svc-signature'] as string, 'whsec_wrong', 300, nowSec()),
      false,
    )
    assert.equal(
      verifyWebhook(
        got.raw.replace('a@b.c', 'x@b.c'),
        got.headers['svc-signature'] as string,
        ep.secret,
        300,
        nowSec(),
      ),
      false,
    )
    const stored = await api('GET', `/v1/events/${eventId}`)
    assert.deepEqual(got.body, stored.json())
    assert.equal(got.body.data.object.email, 'a@b.c')
  })

  test("the official stripe package's verifier accepts our Svc-Signature header and secret", async () => {
    const ep = await freshEndpoint()
    const eventId = await emitEvent(t, tenant, 'card.created')
    await runner.drain()
    const got = receiver.received[0]
    const stripe = new Stripe('sk_test_placeholder')
    const event = stripe.webhooks.constructEvent(
      got.raw,
      got.headers['svc-signature'] as string,
      ep.secret,
      300,
      undefined,
      nowSec(),
    )
    assert.equal(event.id, eventId)
    assert.throws(() =>
      stripe.webhooks.constructEvent(
        got.raw,
        got.headers['svc-signature'] as string,
        'whsec_other',
      ),
    )
  })

  test('only enabled endpoints subscribed to the type (or to *) receive an event', async () => {
    await freshEndpoint(['card.created'])
    const other = await startReceiver()
    try {
      const all = await createEndpoint(t, await tenant.token(), other.url, ['*'])
      const off = await createEndpoint(t, await tenant.token(), `${other.url}/off`, ['*'])
      await api('PATCH', `/v1/webhook_endpoints/${off.id}`, { status: 'disabled' })
      await emitEvent(t, tenant, 'cardholder.created')
      await runner.drain()
      assert.equal(receiver.received.length, 0)
      assert.deepEqual(
        other.received.map((r) => r.headers['svc-event-type']),
        ['cardholder.created'],
      )
      assert.ok(all.id)
    } finally {
      await other.close()
    }
  })

  test('a receiver answering 500 three times then 200 gets the event on attempt 4, same event id each time', async () => {
    const ep = await freshEndpoint()
    receiver.respond = (_req, i) => (i < 3 ? 500 : 200)
    const eventId = await emitEvent(t, tenant, 'card.activated')
    await runner.drain()
    for (const wait of SCHEDULE) {
      assert.equal(await runner.drain(), 0, 'nothing is retried before its time')
      t.clock.advance(wait * 1000)
      await runner.drain()
    }
    assert.deepEqual(
      receiver.received.map((r) => r.headers['svc-delivery-attempt']),
      ['1', '2', '3', '4'],
    )
    assert.deepEqual(new Set(receiver.received.map((r) => r.body.id)), new Set([eventId]))
    assert.deepEqual(
      new Set(receiver.received.map((r) => r.headers['svc-event-id'])),
      new Set([eventId]),
    )
    t.clock.advance(3600_000)
    assert.equal(await runner.drain(), 0, 'a delivered event is not sent again')
    assert.equal(receiver.received.length, 4)

    const attempts = await t.operator('GET', `/operator/v1/events/${eventId}/delivery_attempts`)
    assert.deepEqual(
      attempts.data.map((a: any) => [a.attempt, a.status_code, a.succeeded]),
      [
        [4, 200, true],
        [3, 500, false],
        [2, 500, false],
        [1, 500, false],
      ],
    )
    assert.equal(attempts.data[1].response_body, 'failure 500')
    assert.equal(attempts.data[1].webhook_endpoint_id, ep.id)
    assert.ok(
      attempts.data.every((a: any) => Number.isInteger(a.duration_ms) && a.duration_ms >= 0),
    )
    const state = await t.operator('GET', `/operator/v1/events/${eventId}/deliveries`)
    assert.equal(state.data[0].status, 'delivered')
    assert.equal((await api('GET', `/v1/webhook_endpoints/${ep.id}`)).json().status, 'enabled')
  })

  test('a receiver down past the retry period gets the endpoint disabled; replay after re-enabling delivers', async () => {
    const dead = await startReceiver()
    await dead.close()
    const ep = await freshEndpoint(['*'], dead.url)
    const since = t.clock.now().toISOString()
    const eventId = await emitEvent(t, tenant, 'card.frozen')
    await runner.drain()
    for (const wait of SCHEDULE) {
      assert.equal((await api('GET', `/v1/webhook_endpoints/${ep.id}`)).json().status, 'enabled')
      t.clock.advance(wait * 1000)
      await runner.drain()
    }
    const disabled = (await api('GET', `/v1/webhook_endpoints/${ep.id}`)).json()
    assert.equal(disabled.status, 'disabled')
    assert.equal(disabled.disabled_reason, 'failing')
    assert.ok(
      Date.parse(disabled.failing_since) <=
        Date.parse(disabled.updated_at) - SCHEDULE.reduce((x, y) => x + y, 0) * 1000,
    )
    const attempts = await t.operator(
      'GET',
      `/operator/v1/webhook_endpoints/${ep.id}/delivery_attempts`,
    )
    assert.equal(attempts.data.length, 4)
    assert.ok(
      attempts.data.every((a: any) => a.status_code === null && /ECONNREFUSED/.test(a.error)),
    )
    const notice = (await api('GET', '/v1/events?type=webhook_endpoint.disabled')).json().data
    assert.equal(notice.length, 1)
    assert.equal(notice[0].data.object.id, ep.id)
    assert.equal(notice[0].data.object.status, 'disabled')
    assert.equal(notice[0].data.object.disabled_reason, 'failing')
    assert.equal(notice[0].data.object.secret, undefined)

    // Events keep being stored while the endpoint is disabled, but nothing is sent.
    const missedId = await emitEvent(t, tenant, 'card.closed')
    t.clock.advance(3600_000)
    assert.equal(await runner.drain(), 0)

    const refused = await t.app.inject({
      method: 'POST',
      url: `/operator/v1/webhook_endpoints/${ep.id}/replay`,
      headers: { authorization: 'Bearer op_test_operator_token' },
      payload: { since },
    })
    assert.equal(refused.statusCode, 400)

    const live = await api('PATCH', `/v1/webhook_endpoints/${ep.id}`, {
      url: receiver.url,
      status: 'enabled',
    })
    assert.equal(live.json().status, 'enabled')
    assert.equal(live.json().disabled_reason, null)
    assert.equal(live.json().failing_since, null)
    const replay = await t.operator('POST', `/operator/v1/webhook_endpoints/${ep.id}/replay`, {
      since,
    })
    assert.equal(replay.queued, 3) // the failed event, the disabled notice, and the one missed while disabled
    await runner.drain()
    const byId = new Map(receiver.received.map((r) => [r.body.id, r]))
    assert.equal(
      byId.get(eventId)?.headers['svc-delivery-attempt'],
      '5',
      'the replay continues the attempt numbering',
    )
    assert.equal(byId.get(missedId)?.headers['svc-delivery-attempt'], '1')
    assert.equal(
      verifyWebhook(
        byId.get(eventId)!.raw,
        byId.get(eventId)!.headers['svc-signature'] as string,
        ep.secret,
        300,
        nowSec(),
      ),
      true,
    )
  })

  test('replaying one event re-sends it with a new attempt number', async () => {
    const ep = await freshEndpoint()
    const eventId = await emitEvent(t, tenant, 'card.issued')
    await runner.drain()
    const replay = await t.operator('POST', `/operator/v1/events/${eventId}/replay`, {})
    assert.deepEqual(replay.webhook_endpoint_ids, [ep.id])
    await runner.drain()
    assert.deepEqual(
      receiver.received.map((r) => [r.body.id, r.headers['svc-delivery-attempt']]),
      [
        [eventId, '1'],
        [eventId, '2'],
      ],
    )
    const missing = await t.app.inject({
      method: 'POST',
      url: '/operator/v1/events/evt_01J00000000000000000000000/replay',
      headers: { authorization: 'Bearer op_test_operator_token' },
      payload: {},
    })
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.json().error.code, 'event_not_found')
  })

  test('after a secret rotation both secrets sign for 24 hours, then only the new one', async () => {
    const ep = await freshEndpoint()
    const rotated = (await api('POST', `/v1/webhook_endpoints/${ep.id}/rotate_secret`)).json()
    assert.match(rotated.secret, /^whsec_/)
    assert.notEqual(rotated.secret, ep.secret)
    await emitEvent(t, tenant, 'card.unfrozen')
    await runner.drain()
    const first = receiver.received[0]
    const header = first.headers['svc-signature'] as string
    assert.equal(header.split(',').filter((p) => p.startsWith('v1=')).length, 2)
    assert.equal(verifyWebhook(first.raw, header, rotated.secret, 300, nowSec()), true)
    assert.equal(verifyWebhook(first.raw, header, ep.secret, 300, nowSec()), true)

    t.clock.advance(24 * 3600_000 + 1000)
    await emitEvent(t, tenant, 'card.unfrozen')
    await runner.drain()
    const second = receiver.received[1]
    const header2 = second.headers['svc-signature'] as string
    assert.equal(header2.split(',').filter((p) => p.startsWith('v1=')).length, 1)
    const t2 = nowSec()
    assert.equal(verifyWebhook(second.raw, header2, rotated.secret, 300, t2), true)
    assert.equal(verifyWebhook(second.raw, header2, ep.secret, 300, t2), false)
  })

  test('an event emitted in a rolled-back transaction is neither stored nor delivered', async () => {
    await freshEndpoint()
    let eventId = ''
    await assert.rejects(
      withTx(t.deps.db, async (trx) => {
        eventId = await emit(
          trx,
          { organizationId: tenant.organizationId, environment: 'sandbox' },
          'card.created',
          { id: 'card_rb' },
          t.clock.now(),
        )
        throw new Error('the change failed')
      }),
    )
    assert.equal(await runner.drain(), 0)
    assert.equal(receiver.received.length, 0)
    assert.equal((await api('GET', `/v1/events/${eventId}`)).statusCode, 404)
  })

  test('an attempt keeps at most 4 KiB of the response body', async () => {
    await freshEndpoint()
    receiver.respond = () => ({ status: 502, body: 'x'.repeat(5000) })
    const eventId = await emitEvent(t, tenant, 'card.shipped')
    await runner.drain()
    const attempts = await t.operator('GET', `/operator/v1/events/${eventId}/delivery_attempts`)
    assert.equal(attempts.data[0].status_code, 502)
    assert.equal(attempts.data[0].response_body.length, 4096)
    assert.equal(attempts.data[0].error, 'HTTP 502')
  })
})
