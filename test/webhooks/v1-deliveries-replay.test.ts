import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { JobRunner } from '../../src/jobs/runner.js'
import { isId } from '../../src/lib/ids.js'
import { verifyWebhook } from '../../src/lib/webhook-signature.js'
import { SCOPES } from '../../src/modules/oauth/scopes.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { createEndpoint, emitEvent, startReceiver, type Receiver } from './helpers.js'

// The /v1 side of the console's webhook pages (decisions.md, "API parity"): an endpoint's delivery log, replaying one
// event or an endpoint's events since a time, and the test event; endpoints show their health.
describe('/v1 delivery log, replays and test events', () => {
  let t: TestApp
  let tenant: TestClient
  let live: TestClient
  let other: TestClient
  let runner: JobRunner
  let a: Receiver
  let b: Receiver

  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_RETRY_SCHEDULE: '10,20,30' } })
    tenant = await createTenant(t)
    live = await createTenant(t, {
      organizationId: tenant.organizationId,
      environment: 'production',
    })
    other = await createTenant(t)
    runner = new JobRunner(t.deps, t.jobs)
    a = await startReceiver('/a')
    b = await startReceiver('/b')
  })
  after(async () => {
    await a.close()
    await b.close()
    await t.close()
  })

  const api = async (
    method: string,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ) => t.api(await tenant.token(), method, url, body, headers)
  const nowSec = () => Math.floor(t.clock.now().getTime() / 1000)

  function assertError(
    res: LightMyRequestResponse,
    status: number,
    code: string,
    param?: string,
  ): void {
    assert.equal(res.statusCode, status, res.body)
    assert.equal(res.json().error.code, code, res.body)
    if (param !== undefined) assert.equal(res.json().error.param, param)
  }

  /** Fresh receivers and only the endpoints a test makes. */
  async function reset(): Promise<void> {
    for (const r of [a, b]) {
      r.received.length = 0
      r.respond = () => 200
    }
    await runner.drain()
    const list = await api('GET', '/v1/webhook_endpoints?limit=100')
    for (const ep of list.json().data) await api('DELETE', `/v1/webhook_endpoints/${ep.id}`)
    await runner.drain()
    for (const r of [a, b]) r.received.length = 0
  }

  /** Emits an event a few milliseconds after the previous one, so deliveries sort by when they were queued. */
  const emitNext = (
    c: TestClient,
    type: Parameters<typeof emitEvent>[2],
    object?: Record<string, unknown>,
  ) => {
    t.clock.advance(5)
    return emitEvent(t, c, type, object)
  }

  const attemptsOf = (r: Receiver, eventId: string) =>
    r.received
      .filter((x) => x.body?.id === eventId)
      .map((x) => Number(x.headers['svc-delivery-attempt']))

  test('the delivery log shows each delivery with every attempt: when it started, its status code or error, how long it took', async () => {
    await reset()
    const ep = await createEndpoint(t, await tenant.token(), a.url, ['card.*', 'account.created'])
    const ok = await emitNext(tenant, 'card.issued', { id: 'card_1', object: 'card' })
    await runner.drain()
    a.respond = () => 503
    const failing = await emitNext(tenant, 'account.created', { id: 'acct_1', object: 'account' })
    await runner.drain()
    await emitNext(tenant, 'cardholder.created') // not subscribed: no delivery

    const res = await api('GET', `/v1/webhook_endpoints/${ep.id}/deliveries`)
    assert.equal(res.statusCode, 200, res.body)
    const log = res.json()
    assert.equal(log.object, 'list')
    assert.equal(log.url, `/v1/webhook_endpoints/${ep.id}/deliveries`)
    assert.deepEqual(
      log.data.map((d: any) => d.event_id),
      [failing, ok],
      'newest first',
    )
    const [pending, delivered] = log.data
    for (const d of log.data) {
      assert.ok(isId('whd', d.id), d.id)
      assert.equal(d.object, 'webhook_delivery')
      assert.equal(d.webhook_endpoint_id, ep.id)
    }
    assert.equal(delivered.event_type, 'card.issued')
    assert.equal(delivered.status, 'delivered')
    assert.equal(delivered.attempts.length, 1)
    const [first] = delivered.attempts
    assert.deepEqual(Object.keys(first).sort(), [
      'attempt',
      'duration_ms',
      'error',
      'response_body',
      'response_status',
      'started_at',
    ])
    assert.equal(first.response_body, 'ok')
    assert.equal(first.attempt, 1)
    assert.equal(first.response_status, 200)
    assert.equal(first.error, null)
    assert.ok(Number.isInteger(first.duration_ms) && first.duration_ms >= 0)
    assert.ok(Date.parse(first.started_at) <= Date.parse(delivered.delivered_at))
    assert.equal(delivered.next_attempt_at, null)

    assert.equal(pending.event_type, 'account.created')
    assert.equal(pending.status, 'pending')
    assert.deepEqual(
      pending.attempts.map((x: any) => [x.attempt, x.response_status, x.error, x.response_body]),
      [[1, 503, 'HTTP 503', 'failure 503']],
      "the receiver's answer is kept to show why it refused",
    )
    assert.ok(Date.parse(pending.next_attempt_at) > Date.parse(pending.attempts[0].started_at))
    assert.equal(pending.delivered_at, null)

    // The endpoint shows the run of failures; a success ends it.
    const sick = (await api('GET', `/v1/webhook_endpoints/${ep.id}`)).json()
    assert.equal(sick.status, 'enabled')
    assert.equal(sick.disabled_reason, null)
    assert.ok(sick.failing_since && Date.parse(sick.failing_since) > 0)
    a.respond = () => 200
    t.clock.advance(10_000)
    await runner.drain()
    const healed = (await api('GET', `/v1/webhook_endpoints/${ep.id}`)).json()
    assert.equal(healed.failing_since, null)

    const again = (await api('GET', `/v1/webhook_endpoints/${ep.id}/deliveries`)).json().data[0]
    assert.equal(again.id, pending.id, 'a delivery keeps its id across attempts')
    assert.equal(again.status, 'delivered')
    assert.deepEqual(
      again.attempts.map((x: any) => [x.attempt, x.response_status]),
      [
        [1, 503],
        [2, 200],
      ],
    )
  })

  test('the log filters by status or by event type, pages with cursors, and refuses what it does not know', async () => {
    await reset()
    const ep = await createEndpoint(t, await tenant.token(), a.url, ['*'])
    const cards = [await emitNext(tenant, 'card.frozen'), await emitNext(tenant, 'card.unfrozen')]
    await runner.drain()
    a.respond = () => 500
    const acct = await emitNext(tenant, 'account.blocked')
    await runner.drain()
    const ids = async (query: string) =>
      (await api('GET', `/v1/webhook_endpoints/${ep.id}/deliveries${query}`))
        .json()
        .data.map((d: any) => d.event_id)
    assert.deepEqual(await ids('?status=pending'), [acct])
    assert.deepEqual(await ids('?status=delivered'), [...cards].reverse())
    assert.deepEqual(await ids('?status=failed'), [])
    assert.deepEqual(await ids('?event_type=card.*'), [...cards].reverse())
    assert.deepEqual(await ids('?event_type=account.blocked'), [acct])
    assert.deepEqual(await ids('?event_type=*&status=pending'), [acct])

    const page1 = (await api('GET', `/v1/webhook_endpoints/${ep.id}/deliveries?limit=2`)).json()
    assert.equal(page1.has_more, true)
    const page2 = (
      await api(
        'GET',
        `/v1/webhook_endpoints/${ep.id}/deliveries?limit=2&starting_after=${page1.next_cursor}`,
      )
    ).json()
    assert.deepEqual(
      [...page1.data, ...page2.data].map((d: any) => d.event_id),
      [acct, cards[1], cards[0]],
    )
    assert.equal(page2.has_more, false)

    assertError(
      await api('GET', `/v1/webhook_endpoints/${ep.id}/deliveries?status=canceled`),
      400,
      'invalid_parameter',
      'status',
    )
    assertError(
      await api('GET', `/v1/webhook_endpoints/${ep.id}/deliveries?event_type=card`),
      400,
      'invalid_parameter',
      'event_type',
    )
    // One filter or the other: each has its index, the pair would walk one past what the other rejects.
    assertError(
      await api(
        'GET',
        `/v1/webhook_endpoints/${ep.id}/deliveries?status=pending&event_type=account.*`,
      ),
      400,
      'invalid_parameter',
      'event_type',
    )
    assertError(
      await api('GET', `/v1/webhook_endpoints/${ep.id}/deliveries?limit=101`),
      400,
      'invalid_parameter',
      'limit',
    )

    // A disabled endpoint's pending deliveries are closed unsent when their turn comes: they read as failed.
    await api('PATCH', `/v1/webhook_endpoints/${ep.id}`, { status: 'disabled' })
    t.clock.advance(10_000)
    await runner.drain()
    assert.deepEqual(await ids('?status=failed'), [acct])
    const disabled = (await api('GET', `/v1/webhook_endpoints/${ep.id}`)).json()
    assert.equal(disabled.disabled_reason, 'manual')
    assert.equal(disabled.failing_since, null)
  })

  test('every endpoint answer carries failing_since and disabled_reason', async () => {
    await reset()
    const created = await createEndpoint(t, await tenant.token(), a.url)
    const answers = [
      created,
      (await api('GET', `/v1/webhook_endpoints/${created.id}`)).json(),
      (await api('GET', '/v1/webhook_endpoints')).json().data[0],
      (await api('PATCH', `/v1/webhook_endpoints/${created.id}`, { description: 'x' })).json(),
      (await api('POST', `/v1/webhook_endpoints/${created.id}/rotate_secret`)).json(),
    ]
    for (const ep of answers) {
      assert.ok('failing_since' in ep && 'disabled_reason' in ep, JSON.stringify(ep))
      assert.equal(ep.failing_since, null)
      assert.equal(ep.disabled_reason, null)
    }
  })

  test('replaying an event sends it again with a higher Svc-Delivery-Attempt, to the endpoint named or to every subscriber', async () => {
    await reset()
    const one = await createEndpoint(t, await tenant.token(), a.url, ['card.*'])
    const two = await createEndpoint(t, await tenant.token(), b.url, ['account.created'])
    const eventId = await emitNext(tenant, 'card.activated')
    await runner.drain()
    assert.deepEqual(attemptsOf(a, eventId), [1])
    assert.deepEqual(attemptsOf(b, eventId), [])

    const replay = await api('POST', `/v1/events/${eventId}/replay`, {})
    assert.equal(replay.statusCode, 200, replay.body)
    assert.deepEqual(replay.json(), {
      object: 'replay',
      queued: 1,
      event_id: eventId,
      webhook_endpoint_ids: [one.id],
      since: null,
    })
    await runner.drain()
    assert.deepEqual(
      attemptsOf(a, eventId),
      [1, 2],
      'the prefix wildcard card.* takes it; account.created does not',
    )
    const again = a.received.at(-1)!
    assert.equal(
      verifyWebhook(again.raw, again.headers['svc-signature'] as string, one.secret, 300, nowSec()),
      true,
    )

    // Named: any of the caller's enabled endpoints, subscribed or not.
    const named = (
      await api('POST', `/v1/events/${eventId}/replay`, { webhook_endpoint_id: two.id })
    ).json()
    assert.deepEqual(named.webhook_endpoint_ids, [two.id])
    await runner.drain()
    assert.deepEqual(attemptsOf(b, eventId), [1])
    const log = (await api('GET', `/v1/webhook_endpoints/${one.id}/deliveries`)).json().data[0]
    assert.deepEqual(
      log.attempts.map((x: any) => x.attempt),
      [1, 2],
    )

    // One Idempotency-Key, one replay.
    const key = { 'idempotency-key': `replay-${eventId}` }
    const first = await api('POST', `/v1/events/${eventId}/replay`, {}, key)
    const second = await api('POST', `/v1/events/${eventId}/replay`, {}, key)
    assert.equal(second.headers['idempotent-replay'], 'true')
    assert.equal(second.body, first.body)
    await runner.drain()
    assert.deepEqual(attemptsOf(a, eventId), [1, 2, 3])
  })

  test("an event replay refuses what is not the caller's, a disabled endpoint and a token without webhooks:write", async () => {
    await reset()
    const mine = await createEndpoint(t, await tenant.token(), a.url, ['*'])
    const eventId = await emitNext(tenant, 'card.closed')
    const theirEvent = await emitNext(other, 'card.closed')
    const theirEndpoint = await createEndpoint(t, await other.token(), b.url, ['*'])
    const liveEvent = await emitNext(live, 'card.closed')
    const liveEndpoint = await createEndpoint(
      t,
      await live.token(),
      'https://hooks.example.com/live',
      ['*'],
    )

    assertError(await api('POST', `/v1/events/${theirEvent}/replay`, {}), 404, 'event_not_found')
    assertError(
      await api('POST', '/v1/events/evt_01J00000000000000000000000/replay', {}),
      404,
      'event_not_found',
    )
    assertError(
      await api('POST', `/v1/events/${liveEvent}/replay`, {}),
      403,
      'environment_mismatch',
    )
    assertError(
      await api('POST', `/v1/events/${eventId}/replay`, { webhook_endpoint_id: theirEndpoint.id }),
      404,
      'webhook_endpoint_not_found',
      'webhook_endpoint_id',
    )
    assertError(
      await api('POST', `/v1/events/${eventId}/replay`, { webhook_endpoint_id: liveEndpoint.id }),
      403,
      'environment_mismatch',
    )
    assertError(
      await api('POST', `/v1/events/${eventId}/replay`, { webhook_endpoint_id: 'whe_nope' }),
      404,
      'webhook_endpoint_not_found',
    )
    assertError(
      await api('POST', `/v1/events/${eventId}/replay`, { other: 1 }),
      400,
      'unknown_parameter',
      'other',
    )

    await api('PATCH', `/v1/webhook_endpoints/${mine.id}`, { status: 'disabled' })
    assertError(
      await api('POST', `/v1/events/${eventId}/replay`, { webhook_endpoint_id: mine.id }),
      400,
      'invalid_parameter',
      'webhook_endpoint_id',
    )
    const none = (await api('POST', `/v1/events/${eventId}/replay`, {})).json()
    assert.equal(none.queued, 0, 'no enabled endpoint takes it')

    const readOnly = await tenant.token(
      SCOPES.filter((s) => s !== 'webhooks:write' && !s.startsWith('authentications:')).join(' '),
    )
    assertError(
      await t.api(readOnly, 'POST', `/v1/events/${eventId}/replay`, {}),
      403,
      'insufficient_scope',
    )
    assert.equal(
      (await t.api(readOnly, 'GET', `/v1/events/${eventId}`)).statusCode,
      200,
      'reading events needs no scope',
    )
    assertError(
      await t.api(readOnly, 'GET', `/v1/webhook_endpoints/${mine.id}/deliveries`),
      403,
      'insufficient_scope',
    )
  })

  test("one event's deliveries: one per endpoint it went to, with every attempt, only the caller's and with webhooks:write", async () => {
    await reset()
    const one = await createEndpoint(t, await tenant.token(), a.url, ['card.*'])
    const two = await createEndpoint(t, await tenant.token(), b.url, ['*'])
    await createEndpoint(t, await tenant.token(), 'https://hooks.example.com/accounts', [
      'account.created',
    ])
    b.respond = () => 500
    const eventId = await emitNext(tenant, 'card.frozen')
    await runner.drain()
    const res = await api('GET', `/v1/events/${eventId}/deliveries`)
    assert.equal(res.statusCode, 200, res.body)
    const list = res.json()
    assert.equal(list.object, 'list')
    assert.equal(list.has_more, false)
    assert.equal(list.next_cursor, null)
    const byEndpoint = new Map(list.data.map((d: any) => [d.webhook_endpoint_id, d]))
    assert.deepEqual(
      [...byEndpoint.keys()].sort(),
      [one.id, two.id].sort(),
      'the endpoint not subscribed to card.frozen has no delivery',
    )
    const ok = byEndpoint.get(one.id) as any
    assert.equal(ok.status, 'delivered')
    assert.equal(ok.event_id, eventId)
    assert.equal(ok.attempts[0].response_status, 200)
    assert.equal(typeof ok.attempts[0].duration_ms, 'number')
    const failing = byEndpoint.get(two.id) as any
    assert.equal(failing.attempts[0].response_status, 500)
    assert.deepEqual(
      failing,
      (await api('GET', `/v1/webhook_endpoints/${two.id}/deliveries`))
        .json()
        .data.find((d: any) => d.event_id === eventId),
      'the same delivery as the endpoint log shows',
    )

    const theirs = await emitNext(other, 'card.frozen')
    assertError(await api('GET', `/v1/events/${theirs}/deliveries`), 404, 'event_not_found')
    assertError(
      await api('GET', '/v1/events/evt_01J00000000000000000000000/deliveries'),
      404,
      'event_not_found',
    )
    const readOnly = await tenant.token(
      SCOPES.filter((s) => s !== 'webhooks:write' && !s.startsWith('authentications:')).join(' '),
    )
    assertError(
      await t.api(readOnly, 'GET', `/v1/events/${eventId}/deliveries`),
      403,
      'insufficient_scope',
    )
  })

  test('an endpoint replay re-sends every retained event it takes since a time, delivered or not, with higher attempt numbers', async () => {
    await reset()
    const ep = await createEndpoint(t, await tenant.token(), a.url, ['card.*'])
    const before = await emitNext(tenant, 'card.created')
    await runner.drain()
    t.clock.advance(60_000)
    const since = t.clock.now().toISOString()
    const taken = [await emitNext(tenant, 'card.issued'), await emitNext(tenant, 'card.frozen')]
    await emitNext(tenant, 'account.created')
    await runner.drain()
    assert.equal(a.received.length, 3)

    const res = await api('POST', `/v1/webhook_endpoints/${ep.id}/replay`, { since })
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual(res.json(), {
      object: 'replay',
      queued: 2,
      event_id: null,
      webhook_endpoint_ids: [ep.id],
      since,
    })
    await runner.drain()
    assert.deepEqual(attemptsOf(a, before), [1])
    for (const id of taken) assert.deepEqual(attemptsOf(a, id), [1, 2])

    assertError(
      await api('POST', `/v1/webhook_endpoints/${ep.id}/replay`, {
        since: new Date(t.clock.now().getTime() - 31 * 86_400_000).toISOString(),
      }),
      400,
      'invalid_parameter',
      'since',
    )
    assertError(
      await api('POST', `/v1/webhook_endpoints/${ep.id}/replay`, { since: '1700000000' }),
      400,
      'invalid_parameter',
      'since',
    )
    assertError(
      await api('POST', `/v1/webhook_endpoints/${ep.id}/replay`, { since: '2026-11-01T10:00:00' }),
      400,
      'invalid_parameter',
      'since',
    )
    assertError(
      await api('POST', `/v1/webhook_endpoints/${ep.id}/replay`, {}),
      400,
      'missing_parameter',
      'since',
    )
    const theirs = await createEndpoint(t, await other.token(), b.url)
    assertError(
      await api('POST', `/v1/webhook_endpoints/${theirs.id}/replay`, { since }),
      404,
      'webhook_endpoint_not_found',
    )
    const liveEndpoint = await createEndpoint(
      t,
      await live.token(),
      'https://hooks.example.com/live',
    )
    assertError(
      await api('POST', `/v1/webhook_endpoints/${liveEndpoint.id}/replay`, { since }),
      403,
      'environment_mismatch',
    )
    await api('PATCH', `/v1/webhook_endpoints/${ep.id}`, { status: 'disabled' })
    assertError(
      await api('POST', `/v1/webhook_endpoints/${ep.id}/replay`, { since }),
      400,
      'invalid_parameter',
      'webhook_endpoint_id',
    )
  })

  test('the test event reaches only the endpoint tested, whatever the subscriptions, and its replays stay with it', async () => {
    await reset()
    const tested = await createEndpoint(t, await tenant.token(), a.url, ['card.created'])
    const bystander = await createEndpoint(t, await tenant.token(), b.url, ['*'])
    const since = t.clock.now().toISOString()
    const res = await api('POST', `/v1/webhook_endpoints/${tested.id}/test`)
    assert.equal(res.statusCode, 200, res.body)
    const event = res.json()
    assert.equal(event.object, 'event')
    assert.equal(event.type, 'webhook_endpoint.test')
    assert.equal(event.data.object.id, tested.id)
    assert.equal(event.data.object.secret, undefined)
    assert.deepEqual((await api('GET', `/v1/events/${event.id}`)).json(), event)
    await runner.drain()
    assert.deepEqual(
      a.received.map((r) => [
        r.body.type,
        r.headers['svc-event-type'],
        r.headers['svc-delivery-attempt'],
      ]),
      [['webhook_endpoint.test', 'webhook_endpoint.test', '1']],
    )
    assert.equal(
      verifyWebhook(
        a.received[0].raw,
        a.received[0].headers['svc-signature'] as string,
        tested.secret,
        300,
        nowSec(),
      ),
      true,
    )
    assert.equal(
      b.received.length,
      0,
      "an endpoint subscribed to * does not receive another endpoint's test",
    )
    const log = (await api('GET', `/v1/webhook_endpoints/${tested.id}/deliveries`)).json().data
    assert.deepEqual(
      log.map((d: any) => [d.event_id, d.event_type, d.status]),
      [[event.id, 'webhook_endpoint.test', 'delivered']],
    )
    assert.deepEqual(
      (await api('GET', `/v1/webhook_endpoints/${bystander.id}/deliveries`)).json().data,
      [],
    )

    // Replays: the event goes back to the endpoint it tested, never to another.
    const replay = (await api('POST', `/v1/events/${event.id}/replay`, {})).json()
    assert.deepEqual(replay.webhook_endpoint_ids, [tested.id])
    await runner.drain()
    assertError(
      await api('POST', `/v1/events/${event.id}/replay`, { webhook_endpoint_id: bystander.id }),
      400,
      'invalid_parameter',
      'webhook_endpoint_id',
    )
    assert.equal(
      (await api('POST', `/v1/webhook_endpoints/${bystander.id}/replay`, { since })).json().queued,
      0,
    )
    assert.equal(
      (await api('POST', `/v1/webhook_endpoints/${tested.id}/replay`, { since })).json().queued,
      1,
    )
    await runner.drain()
    assert.deepEqual(attemptsOf(a, event.id), [1, 2, 3])
    assert.equal(b.received.length, 0)

    // Refusals.
    const theirs = await createEndpoint(t, await other.token(), b.url)
    assertError(
      await api('POST', `/v1/webhook_endpoints/${theirs.id}/test`),
      404,
      'webhook_endpoint_not_found',
    )
    const liveEndpoint = await createEndpoint(
      t,
      await live.token(),
      'https://hooks.example.com/live',
    )
    assertError(
      await api('POST', `/v1/webhook_endpoints/${liveEndpoint.id}/test`),
      403,
      'environment_mismatch',
    )
    assertError(
      await api('POST', `/v1/webhook_endpoints/${tested.id}/test`, { x: 1 }),
      400,
      'unknown_parameter',
      'x',
    )
    await api('PATCH', `/v1/webhook_endpoints/${tested.id}`, { status: 'disabled' })
    assertError(
      await api('POST', `/v1/webhook_endpoints/${tested.id}/test`),
      400,
      'invalid_parameter',
      'webhook_endpoint_id',
    )
    const noWebhooks = await tenant.token('cards:read')
    assertError(
      await t.api(noWebhooks, 'POST', `/v1/webhook_endpoints/${bystander.id}/test`),
      403,
      'insufficient_scope',
    )
  })
})
