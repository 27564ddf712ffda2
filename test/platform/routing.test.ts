import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { Type } from 'typebox'
import { createTenant, OPERATOR_TOKEN, startTestApp, type TestApp } from '../helpers/app.js'

let t: TestApp
let production: string
let sandbox: string
let pinCalls = 0

/** A 404 as the caller sees it: status, the headers that could tell cases apart, and the body without its request id. */
function shape(res: LightMyRequestResponse) {
  const body = res.json()
  assert.match(body.error.request_id, /^req_/)
  assert.equal(res.headers['svc-request-id'], body.error.request_id)
  const headers = { ...res.headers }
  delete headers.date
  delete headers['svc-request-id']
  return { status: res.statusCode, headers, body: { error: { ...body.error, request_id: 'req_' } } }
}

describe('routing: one 404 for everything that is not there', () => {
  before(async () => {
    t = await startTestApp({
      beforeReady(app) {
        app.post(
          '/v1/test/routing/widgets/:widget_id/pin',
          {
            config: {
              scope: 'cards:write',
              capability: {
                name: 'card_pin',
                // "mounted" belongs to a program with the capability; anything else to one without it.
                programOf: async (req) => ({
                  capabilities:
                    (req.params as { widget_id: string }).widget_id === 'mounted'
                      ? ['card_pin']
                      : ['account_credit'],
                }),
              },
            },
            schema: {
              params: Type.Object({ widget_id: Type.String() }),
              body: Type.Object({ pin: Type.String() }, { additionalProperties: false }),
            },
          },
          async () => {
            pinCalls++
            return { object: 'pin', ok: true }
          },
        )
        app.post('/v1/test/routing/simulate', { config: { simulator: true } }, async () => ({
          object: 'simulation',
          ok: true,
        }))
      },
    })
    production = await (await createTenant(t, { environment: 'production' })).token()
    sandbox = await (await createTenant(t)).token()
  })
  after(() => t.close())

  test('unknown path, a production simulator path (any method), unmounted operation answer the identical 404 not_found', async () => {
    const body = { pin: '1234' }
    const cases = {
      unknownPath: await t.api(production, 'POST', '/v1/test/routing/nothing-here', body),
      wrongMethod: await t.api(production, 'DELETE', '/v1/test/routing/simulate', body),
      unmounted: await t.api(production, 'POST', '/v1/test/routing/widgets/plain/pin', body),
      simulatorInProduction: await t.api(production, 'POST', '/v1/test/routing/simulate', body),
    }
    const reference = shape(cases.unknownPath)
    assert.equal(reference.status, 404)
    assert.equal(reference.body.error.code, 'not_found')
    assert.equal(reference.body.error.type, 'invalid_request_error')
    assert.match(String(reference.headers['content-type']), /^application\/json; charset=utf-8$/)
    assert.deepEqual(Object.keys(reference.headers).sort(), [
      'connection',
      'content-length',
      'content-type',
    ])
    for (const [name, res] of Object.entries(cases)) assert.deepEqual(shape(res), reference, name)
    assert.equal(pinCalls, 0)
  })

  test('a wrong method on a path that exists answers 405 method_not_allowed with Allow', async () => {
    const card = await t.api(sandbox, 'PUT', '/v1/cards/card_01ABC', { status: 'frozen' })
    assert.equal(card.statusCode, 405, card.body)
    assert.equal(card.headers.allow, 'GET, HEAD, PATCH')
    const error = card.json().error
    assert.equal(error.code, 'method_not_allowed')
    assert.equal(error.type, 'invalid_request_error')
    assert.equal(
      error.message,
      '/v1/cards/card_01ABC does not take PUT; it takes GET, HEAD, PATCH.',
    )
    const list = await t.api(sandbox, 'DELETE', '/v1/cards?limit=1')
    assert.equal(list.statusCode, 405)
    assert.equal(list.headers.allow, 'GET, HEAD, POST')
    // A simulator route is told of in the sandbox only; an optional operation never (it may not be mounted).
    const simulate = await t.api(sandbox, 'DELETE', '/v1/test/routing/simulate')
    assert.equal(simulate.statusCode, 405)
    assert.equal(simulate.headers.allow, 'POST')
    const gated = await t.api(sandbox, 'GET', '/v1/test/routing/widgets/mounted/pin')
    assert.equal(gated.statusCode, 404)
    assert.equal(gated.json().error.code, 'not_found')
    // Before the token: the 401 comes first, whatever the method.
    const anonymous = await t.app.inject({ method: 'PUT', url: '/v1/cards/card_01ABC' })
    assert.equal(anonymous.statusCode, 401)
  })

  test('the 404 does not depend on the body sent: bad JSON, a foreign content type or an oversized body', async () => {
    const reference = shape(
      await t.api(production, 'POST', '/v1/test/routing/widgets/plain/pin', { pin: '1' }),
    )
    const variants = [
      ['{not json', 'application/json'],
      ['pin=1', 'text/plain'],
      [JSON.stringify({ pin: 'x'.repeat(2 * 1024 * 1024) }), 'application/json'],
    ]
    for (const [payload, type] of variants) {
      for (const url of [
        '/v1/test/routing/widgets/plain/pin',
        '/v1/test/routing/nothing-here',
        '/v1/test/routing/simulate',
      ]) {
        assert.deepEqual(
          shape(await t.api(production, 'POST', url, payload, { 'content-type': type })),
          reference,
          `${url} ${type}`,
        )
      }
    }
  })

  test('a scope the token lacks does not reveal an unmounted operation', async () => {
    const narrow = await (await createTenant(t, { scopes: ['cardholders:read'] })).token()
    const unmounted = await t.api(narrow, 'POST', '/v1/test/routing/widgets/plain/pin', {
      pin: '1',
    })
    const unknown = await t.api(narrow, 'POST', '/v1/test/routing/nothing-here', { pin: '1' })
    assert.deepEqual(shape(unmounted), shape(unknown))
    const mounted = await t.api(narrow, 'POST', '/v1/test/routing/widgets/mounted/pin', {
      pin: '1',
    })
    assert.equal(mounted.statusCode, 403)
    assert.equal(mounted.json().error.code, 'insufficient_scope')
  })

  test('outside /v1 an unknown path answers the same envelope', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/no/such/page' })
    assert.equal(res.statusCode, 404)
    assert.equal(res.json().error.code, 'not_found')
  })

  test('an operation is mounted when the request’s program has the capability', async () => {
    const res = await t.api(sandbox, 'POST', '/v1/test/routing/widgets/mounted/pin', {
      pin: '1234',
    })
    assert.equal(res.statusCode, 200)
    assert.equal(pinCalls, 1)
  })

  test('simulator routes answer in sandbox', async () => {
    const res = await t.api(sandbox, 'POST', '/v1/test/routing/simulate', {})
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().object, 'simulation')
  })

  test('GET /healthz answers without a token', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' })
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().status, 'ok')
  })

  test('GET /readyz answers ready once the database is reachable and migrated', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' })
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().status, 'ready')
  })

  test('every response carries a req_ Svc-Request-Id, a fresh one each time', async () => {
    const responses = [
      await t.app.inject({ method: 'GET', url: '/healthz' }),
      await t.app.inject({ method: 'GET', url: '/readyz' }),
      await t.app.inject({
        method: 'GET',
        url: '/metrics',
        headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      }),
      await t.app.inject({ method: 'GET', url: '/openapi.json' }),
      await t.app.inject({ method: 'GET', url: '/docs/errors' }),
      await t.app.inject({ method: 'GET', url: '/v1/programs' }),
      await t.app.inject({
        method: 'POST',
        url: '/oauth/token',
        payload: 'grant_type=password',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
      }),
      await t.api(sandbox, 'GET', '/v1/programs'),
      await t.api(sandbox, 'GET', '/v1/programs?limit=0'),
      await t.api(sandbox, 'GET', '/v1/nothing'),
      await t.api(sandbox, 'GET', '/v1/%zz'),
      await t.api(sandbox, 'POST', '/v1/test/routing/widgets/mounted/pin', '{', {
        'content-type': 'application/json',
      }),
      await t.api(
        sandbox,
        'POST',
        '/v1/test/routing/widgets/mounted/pin',
        JSON.stringify({ pin: 'x'.repeat(1100000) }),
        { 'content-type': 'application/json' },
      ),
    ]
    const ids = responses.map((r) => String(r.headers['svc-request-id']))
    for (const [i, id] of ids.entries()) assert.match(id, /^req_[0-9A-Z]{26}$/, `response ${i}`)
    assert.equal(new Set(ids).size, ids.length)
  })

  test('a request id sent by the caller is not echoed back', async () => {
    const res = await t.api(sandbox, 'GET', '/v1/programs', undefined, {
      'svc-request-id': 'req_forged',
      'x-request-id': 'req_forged',
    })
    assert.notEqual(res.headers['svc-request-id'], 'req_forged')
  })
})
