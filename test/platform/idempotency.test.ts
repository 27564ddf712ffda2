import { randomUUID } from 'node:crypto'
import assert from 'node:assert/strict'
import { after, afterEach, before, describe, test } from 'node:test'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { buildApp } from '../../src/app.js'
import { openDatabase } from '../../src/db/client.js'
import { purgeIdempotencyKeys } from '../../src/http/idempotency.js'
import { InFlightKeys } from '../../src/http/in-flight.js'
import { buildServices } from '../../src/runtime.js'
import { addRoutes, calls, slow } from './idempotency-routes.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'

const DAY_MS = 24 * 60 * 60 * 1000
let t: TestApp
let tenant: TestClient
let token: string

function send(
  method: string,
  url: string,
  key: string | null,
  body?: unknown,
  bearer = token,
  headers: Record<string, string> = {},
) {
  return t.api(bearer, method, url, body, {
    ...(key ? { 'idempotency-key': key } : {}),
    ...headers,
  })
}

function assertReplay(replay: LightMyRequestResponse, original: LightMyRequestResponse) {
  assert.equal(replay.headers['idempotent-replay'], 'true')
  assert.equal(replay.statusCode, original.statusCode)
  assert.equal(replay.body, original.body)
}

describe('idempotency keys on POST and PATCH', () => {
  before(async () => {
    t = await startTestApp({ beforeReady: addRoutes })
    tenant = await createTenant(t)
    token = await tenant.token()
  })
  afterEach(() => t.clock.reset())
  after(() => t.close())

  test('the first request with a key is processed and answered without Idempotent-Replay', async () => {
    const before = calls.create
    const res = await send('POST', '/v1/test/idem/things', randomUUID(), { name: 'a' })
    assert.equal(res.statusCode, 201)
    assert.equal(res.headers['idempotent-replay'], undefined)
    assert.equal(calls.create, before + 1)
  })

  test('the same key and body replays the cached status and body with Idempotent-Replay: true, and nothing runs again', async () => {
    const key = randomUUID()
    const first = await send('POST', '/v1/test/idem/things', key, { name: 'a', amount: 5 })
    const before = calls.create
    const second = await send('POST', '/v1/test/idem/things', key, { name: 'a', amount: 5 })
    assertReplay(second, first)
    assert.equal(calls.create, before)
    assert.match(String(second.headers['content-type']), /^application\/json/)
  })

  test('cached responses are stored encrypted: a secret shown once never sits in the key table in clear', async () => {
    const key = randomUUID()
    const marker = `whsec_${randomUUID()}`
    const first = await send('POST', '/v1/test/idem/things', key, { name: marker })
    const stored = await t.deps.db
      .selectFrom('idempotency_keys')
      .select('response_body')
      .where('key', '=', key)
      .executeTakeFirstOrThrow()
    assert.ok(
      stored.response_body && !stored.response_body.includes(marker),
      'the response body is not stored in clear',
    )
    assertReplay(await send('POST', '/v1/test/idem/things', key, { name: marker }), first)
  })

  test('bodies are compared in canonical form: key order and whitespace do not matter', async () => {
    const key = randomUUID()
    const first = await send(
      'POST',
      '/v1/test/idem/things',
      key,
      '{"name":"a","amount":5,"meta":{"a":1,"b":2},"tags":["x","y"]}',
      token,
      { 'content-type': 'application/json' },
    )
    assert.equal(first.statusCode, 201)
    const before = calls.create
    const reordered = await send(
      'POST',
      '/v1/test/idem/things',
      key,
      '{ "tags" : [ "x", "y" ],\n  "meta": {"b": 2, "a": 1},\t"amount":5, "name": "a" }',
      token,
      { 'content-type': 'application/json' },
    )
    assertReplay(reordered, first)
    assert.equal(calls.create, before)
  })

  test('array order is part of the body: reordered tags are a different body', async () => {
    const key = randomUUID()
    await send('POST', '/v1/test/idem/things', key, { name: 'a', tags: ['x', 'y'] })
    const res = await send('POST', '/v1/test/idem/things', key, { name: 'a', tags: ['y', 'x'] })
    assert.equal(res.statusCode, 409)
    assert.equal(res.json().error.code, 'idempotency_key_reuse')
  })

  test('errors are replayed too: a 4xx answer comes back from the cache, the handler does not run again', async () => {
    const key = randomUUID()
    const first = await send('POST', '/v1/test/idem/refusals', key, { name: 'a' })
    assert.equal(first.statusCode, 422)
    assert.equal(first.json().error.code, 'kyc_not_approved')
    const before = calls.refuse
    const second = await send('POST', '/v1/test/idem/refusals', key, { name: 'a' })
    assertReplay(second, first)
    assert.equal(calls.refuse, before)
  })

  test('a validation error is replayed for the same invalid body', async () => {
    const key = randomUUID()
    const first = await send('POST', '/v1/test/idem/things', key, { name: 'a', colour: 'red' })
    assert.equal(first.statusCode, 400)
    assert.equal(first.json().error.code, 'unknown_parameter')
    assertReplay(
      await send('POST', '/v1/test/idem/things', key, { name: 'a', colour: 'red' }),
      first,
    )
  })

  test('the same key with a different body answers 409 idempotency_key_reuse', async () => {
    const key = randomUUID()
    await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    const before = calls.create
    const res = await send('POST', '/v1/test/idem/things', key, { name: 'b' })
    assert.equal(res.statusCode, 409)
    const error = res.json().error
    assert.equal(error.code, 'idempotency_key_reuse')
    assert.equal(error.type, 'invalid_request_error')
    assert.equal(res.headers['idempotent-replay'], undefined)
    assert.equal(calls.create, before)
  })

  test('the same key on a different endpoint answers 409 idempotency_key_reuse', async () => {
    const key = randomUUID()
    await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    const before = calls.other
    const res = await send('POST', '/v1/test/idem/others', key, { name: 'a' })
    assert.equal(res.statusCode, 409)
    assert.equal(res.json().error.code, 'idempotency_key_reuse')
    assert.equal(calls.other, before)
  })

  test('the same key while the original still runs answers 409 idempotency_request_in_progress, then replays once it is done', async () => {
    const key = randomUUID()
    const entered = new Promise<void>((resolve) => {
      slow.entered = resolve
    })
    const original = send('POST', '/v1/test/idem/slow', key, { name: 'a' })
    await entered
    const during = await send('POST', '/v1/test/idem/slow', key, { name: 'a' })
    assert.equal(during.statusCode, 409)
    assert.equal(during.json().error.code, 'idempotency_request_in_progress')
    assert.equal(during.headers['idempotent-replay'], undefined)
    const reuse = await send('POST', '/v1/test/idem/slow', key, { name: 'changed' })
    assert.equal(reuse.json().error.code, 'idempotency_key_reuse')
    slow.release()
    const first = await original
    assert.equal(first.statusCode, 201)
    assert.equal(calls.slow, 1)
    assertReplay(await send('POST', '/v1/test/idem/slow', key, { name: 'a' }), first)
    assert.equal(calls.slow, 1)
  })

  test('a key older than 24 hours is treated as new', async () => {
    const key = randomUUID()
    const first = await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    t.clock.advance(DAY_MS - 60_000)
    const fresh = await tenant.token()
    assertReplay(await send('POST', '/v1/test/idem/things', key, { name: 'a' }, fresh), first)
    t.clock.advance(2 * 60_000)
    const later = await tenant.token()
    const before = calls.create
    const again = await send('POST', '/v1/test/idem/things', key, { name: 'b' }, later)
    assert.equal(again.statusCode, 201)
    assert.equal(again.headers['idempotent-replay'], undefined)
    assert.equal(calls.create, before + 1)
    assert.equal(again.json().name, 'b')
  })

  test('keys are scoped per organization: another organization can use the same key', async () => {
    const key = randomUUID()
    await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    const other = await (await createTenant(t)).token()
    const before = calls.create
    const res = await send('POST', '/v1/test/idem/things', key, { name: 'a' }, other)
    assert.equal(res.statusCode, 201)
    assert.equal(res.headers['idempotent-replay'], undefined)
    assert.equal(calls.create, before + 1)
  })

  test('keys are scoped per environment: the same organization in production can use the same key', async () => {
    const key = randomUUID()
    await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    const live = await (
      await createTenant(t, { organizationId: tenant.organizationId, environment: 'production' })
    ).token()
    const before = calls.create
    const res = await send('POST', '/v1/test/idem/things', key, { name: 'a' }, live)
    assert.equal(res.statusCode, 201)
    assert.equal(res.headers['idempotent-replay'], undefined)
    assert.equal(calls.create, before + 1)
  })

  test('a second client of the same organization and environment gets the replay', async () => {
    const key = randomUUID()
    const first = await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    const sibling = await (await createTenant(t, { organizationId: tenant.organizationId })).token()
    assertReplay(await send('POST', '/v1/test/idem/things', key, { name: 'a' }, sibling), first)
  })

  test('PATCH honours the key', async () => {
    const key = randomUUID()
    const first = await send('PATCH', '/v1/test/idem/things/thg_1', key, { name: 'a' })
    assert.equal(first.statusCode, 200)
    const before = calls.patch
    assertReplay(await send('PATCH', '/v1/test/idem/things/thg_1', key, { name: 'a' }), first)
    assert.equal(calls.patch, before)
    const otherObject = await send('PATCH', '/v1/test/idem/things/thg_2', key, { name: 'a' })
    assert.equal(otherObject.json().error.code, 'idempotency_key_reuse')
  })

  test('GET ignores the key', async () => {
    const key = randomUUID()
    const before = calls.get
    const first = await send('GET', '/v1/test/idem/things', key)
    const second = await send('GET', '/v1/test/idem/things', key)
    assert.equal(second.statusCode, 200)
    assert.equal(second.headers['idempotent-replay'], undefined)
    assert.equal(calls.get, before + 2)
    assert.notEqual(first.body, second.body)
    const post = await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    assert.equal(post.statusCode, 201, 'a GET never claimed the key')
  })

  test('requests without a key are each processed', async () => {
    const before = calls.create
    await send('POST', '/v1/test/idem/things', null, { name: 'a' })
    await send('POST', '/v1/test/idem/things', null, { name: 'a' })
    assert.equal(calls.create, before + 2)
  })

  test('a key longer than 255 characters answers 400 invalid_parameter', async () => {
    const res = await send('POST', '/v1/test/idem/things', 'k'.repeat(256), { name: 'a' })
    assert.equal(res.statusCode, 400)
    assert.equal(res.json().error.code, 'invalid_parameter')
    assert.equal(res.json().error.param, 'Idempotency-Key')
  })

  test('a body that is not JSON is refused under its key like any answer: the identical retry replays it, another body is key reuse', async () => {
    const key = randomUUID()
    const json = { 'content-type': 'application/json' }
    const first = await send('POST', '/v1/test/idem/things', key, '{"name": "a",', token, json)
    assert.equal(first.statusCode, 400)
    assert.equal(first.json().error.code, 'invalid_request_body')
    assert.equal(first.headers['idempotent-replay'], undefined)
    assertReplay(
      await send('POST', '/v1/test/idem/things', key, '{"name": "a",', token, json),
      first,
    )
    const other = await send('POST', '/v1/test/idem/things', key, { name: 'a' })
    assert.equal(other.statusCode, 409)
    assert.equal(other.json().error.code, 'idempotency_key_reuse')
    const plain = await send('POST', '/v1/test/idem/things', randomUUID(), 'name=a', token, {
      'content-type': 'text/plain',
    })
    assert.equal(plain.json().error.code, 'invalid_request_body')
  })

  test('a 500 is not cached: the retry with the same key runs again', async () => {
    const key = randomUUID()
    const first = await send('POST', '/v1/test/idem/flaky', key, { name: 'a' })
    assert.equal(first.statusCode, 500)
    const retry = await send('POST', '/v1/test/idem/flaky', key, { name: 'a' })
    assert.equal(retry.statusCode, 201)
    assert.equal(retry.headers['idempotent-replay'], undefined)
    assert.equal(calls.flaky, 2)
    assertReplay(await send('POST', '/v1/test/idem/flaky', key, { name: 'a' }), retry)
  })

  test('a retryable refusal (409 idempotency_request_in_progress from the handler) is not cached: the retry with the same key runs again', async () => {
    const key = randomUUID()
    const first = await send('POST', '/v1/test/idem/busy', key, { name: 'a' })
    assert.equal(first.statusCode, 409)
    assert.equal(first.json().error.code, 'idempotency_request_in_progress')
    const retry = await send('POST', '/v1/test/idem/busy', key, { name: 'a' })
    assert.equal(retry.statusCode, 201)
    assert.equal(retry.headers['idempotent-replay'], undefined)
    assert.equal(calls.busy, 2)
    assertReplay(await send('POST', '/v1/test/idem/busy', key, { name: 'a' }), retry)
  })

  test('a key held by a node that died is free at once: the retry on another node runs without waiting', async () => {
    // The node that "dies" is a second app with its own registry of running keys (its own lock connection on
    // PostgreSQL, its own process on the embedded database). Its request never answers; its locks go with it.
    const pool = t.deps.config.databaseUrl
      ? await openDatabase({ databaseUrl: t.deps.config.databaseUrl, dataDir: null, poolSize: 4 })
      : null
    const dying = new InFlightKeys(t.deps.config.databaseUrl)
    const node = await buildApp(
      pool
        ? buildServices({ ...t.deps, db: pool.db, inFlight: dying })
        : { ...t.deps, inFlight: dying },
    )
    addRoutes(node)
    await node.ready()
    try {
      const key = randomUUID()
      const entered = new Promise<void>((resolve) => {
        slow.entered = resolve
      })
      const crashed = node.inject({
        method: 'POST',
        url: '/v1/test/idem/slow',
        payload: { name: 'a' },
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
      })
      await entered
      const releaseCrashed = slow.release
      if (pool) {
        const during = await send('POST', '/v1/test/idem/slow', key, { name: 'a' })
        assert.equal(
          during.json().error.code,
          'idempotency_request_in_progress',
          'while the other node runs it, the key is held across nodes',
        )
      }
      await dying.close() // the node dies: its lock connection (and with it every lock it held) is gone
      const enteredAgain = new Promise<void>((resolve) => {
        slow.entered = resolve
      })
      const retry = send('POST', '/v1/test/idem/slow', key, { name: 'a' })
      await enteredAgain
      slow.release()
      const answered = await retry
      assert.equal(answered.statusCode, 201)
      assert.equal(answered.headers['idempotent-replay'], undefined)
      releaseCrashed()
      await crashed
      assertReplay(await send('POST', '/v1/test/idem/slow', key, { name: 'a' }), answered)
    } finally {
      await node.close()
      await pool?.close()
    }
  })

  test('housekeeping purges keys past the window and keeps the recent ones', async () => {
    const old = randomUUID()
    await send('POST', '/v1/test/idem/things', old, { name: 'a' })
    t.clock.advance(DAY_MS + 60_000)
    const fresh = await tenant.token()
    const recent = randomUUID()
    await send('POST', '/v1/test/idem/things', recent, { name: 'a' }, fresh)
    await purgeIdempotencyKeys(t.deps)
    const keys = (
      await t.deps.db
        .selectFrom('idempotency_keys')
        .select('key')
        .where('key', 'in', [old, recent])
        .execute()
    ).map((r) => r.key)
    assert.deepEqual(keys, [recent])
  })

  test('identical requests arriving at the same moment on two nodes run exactly once', async () => {
    // On PostgreSQL the second node has a connection pool of its own; PGlite in memory can only be shared.
    const pool = t.deps.config.databaseUrl
      ? await openDatabase({ databaseUrl: t.deps.config.databaseUrl, dataDir: null, poolSize: 4 })
      : null
    // Each node keeps its own registry of running keys: on PostgreSQL they meet in its advisory locks.
    const inFlight = pool ? new InFlightKeys(t.deps.config.databaseUrl) : t.deps.inFlight
    const second = await buildApp(
      pool ? buildServices({ ...t.deps, db: pool.db, inFlight }) : { ...t.deps, inFlight },
    )
    addRoutes(second)
    await second.ready()
    try {
      for (let round = 0; round < 5; round++) {
        const key = randomUUID()
        const before = calls.race
        const request = (app: FastifyInstance) =>
          app.inject({
            method: 'POST',
            url: '/v1/test/idem/race',
            payload: { name: 'a' },
            headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
          })
        const answers = await Promise.all([
          request(t.app),
          request(second),
          request(t.app),
          request(second),
        ])
        assert.equal(calls.race, before + 1, `round ${round}: exactly one ran`)
        const ran = answers.filter(
          (r) => r.statusCode === 201 && r.headers['idempotent-replay'] === undefined,
        )
        assert.equal(ran.length, 1)
        for (const other of answers.filter((r) => r !== ran[0])) {
          if (other.statusCode === 409)
            assert.equal(other.json().error.code, 'idempotency_request_in_progress')
          else assertReplay(other, ran[0])
        }
      }
    } finally {
      await second.close()
      if (pool) await inFlight.close()
      await pool?.close()
    }
  })
})
