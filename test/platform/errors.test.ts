import assert from 'node:assert/strict'
import { connect, type AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import { Type } from 'typebox'
import { ERROR_CATALOGUE } from '../../src/http/errors.js'
import {
  BASE_URL,
  createTenant,
  OPERATOR_TOKEN,
  startTestApp,
  type TestApp,
} from '../helpers/app.js'

/** Every row of the interface's error table: code, status and type ("" where the interface does not show them). */
const INTERFACE_CODES: [code: string, status: number | null, type: string | null][] = [
  ['invalid_request_body', 400, 'invalid_request_error'],
  ['missing_parameter', 400, 'invalid_request_error'],
  ['invalid_parameter', 400, 'invalid_request_error'],
  ['unknown_parameter', 400, 'invalid_request_error'],
  ['invalid_public_key', 400, 'invalid_request_error'],
  ['expired_cursor', 400, null],
  ['invalid_webhook_url', null, null],
  ['missing_credentials', 401, 'authentication_error'],
  ['invalid_access_token', 401, 'authentication_error'],
  ['insufficient_scope', 403, 'permission_error'],
  ['ip_not_allowed', 403, 'permission_error'],
  ['environment_mismatch', 403, 'permission_error'],
  ['not_found', 404, 'invalid_request_error'],
  ['cardholder_not_found', 404, 'invalid_request_error'],
  ['account_not_found', 404, 'invalid_request_error'],
  ['card_not_found', 404, 'invalid_request_error'],
  ['authorization_not_found', 404, 'invalid_request_error'],
  ['transaction_not_found', 404, 'invalid_request_error'],
  ['dispute_not_found', 404, 'invalid_request_error'],
  ['esim_package_not_found', 404, 'invalid_request_error'],
  ['esim_order_not_found', 404, 'invalid_request_error'],
  ['esim_not_found', 404, 'invalid_request_error'],
  ['token_not_found', 404, 'invalid_request_error'],
  ['idempotency_key_reuse', 409, 'invalid_request_error'],
  ['idempotency_request_in_progress', 409, 'invalid_request_error'],
  ['adjustment_already_applied', 409, 'invalid_request_error'],
  ['cardholder_already_exists', 409, 'invalid_request_error'],
  ['esim_order_reference_exists', 409, 'invalid_request_error'],
  ['identity_document_required', 422, 'validation_error'],
  ['address_required', 422, 'validation_error'],
  ['kyc_not_approved', 422, 'validation_error'],
  ['address_change_requires_kyc', 422, 'validation_error'],
  ['kyc_identity_required', 422, 'validation_error'],
  ['insufficient_funds', 402, 'validation_error'],
  ['account_blocked', 422, 'validation_error'],
  ['currency_mismatch', 422, 'validation_error'],
  ['account_cardholder_mismatch', 422, 'validation_error'],
  ['account_not_provisioned', 422, 'validation_error'],
  ['account_not_fundable', 422, 'validation_error'],
  ['card_invalid_state', 422, 'validation_error'],
  ['card_already_activated', 422, 'validation_error'],
  ['card_closed', 422, 'validation_error'],
  ['card_not_provisioned', 422, 'validation_error'],
  ['card_limit_reached', 422, 'validation_error'],
  ['unsupported_form_factor', 422, 'validation_error'],
  ['embossed_name_required', 422, 'validation_error'],
  ['delivery_address_required', 422, 'validation_error'],
  ['card_type_not_configured', 422, 'validation_error'],
  ['pin_invalid', 422, 'validation_error'],
  ['transaction_not_refundable', 422, 'validation_error'],
  ['refund_exceeds_original', 422, 'validation_error'],
  ['token_invalid_state', 422, 'validation_error'],
  ['token_deleted', 422, 'validation_error'],
  ['program_not_provisioned', 422, 'validation_error'],
  ['program_not_configured', 422, 'validation_error'],
  ['spend_control_unsupported', 422, 'validation_error'],
  ['operation_unsupported', 422, 'validation_error'],
  ['esim_package_unavailable', 422, 'validation_error'],
  ['esim_top_up_unavailable', 422, 'validation_error'],
  ['esim_inventory_exhausted', 422, 'validation_error'],
  ['rate_limited', 429, 'rate_limit_error'],
  ['processor_unavailable', 502, 'api_error'],
  ['processor_permission_denied', 502, 'api_error'],
  ['internal_error', 500, 'api_error'],
]
/** Codes decisions.md adds to the interface's table. */
const DECIDED_CODES: [string, number][] = [
  ['report_not_found', 404],
  ['webhook_endpoint_not_found', 404],
  ['event_not_found', 404],
  ['request_too_large', 413],
]
const RETRYABLE = new Set([
  'idempotency_request_in_progress',
  'esim_inventory_exhausted',
  'rate_limited',
  'processor_unavailable',
  'processor_permission_denied',
  'internal_error',
])

const Address = Type.Object(
  {
    line1: Type.String({ minLength: 1 }),
    city: Type.String({ minLength: 1 }),
    country: Type.String({ pattern: '^[A-Z]{3}$' }),
  },
  { additionalProperties: false },
)
const ThingBody = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    quantity: Type.Optional(Type.Integer({ minimum: 1 })),
    address: Type.Optional(Address),
    size: Type.Optional(Type.Union([Type.Literal('small'), Type.Literal('large')])),
  },
  { additionalProperties: false },
)

let t: TestApp
let token: string

function post(body: unknown, headers: Record<string, string> = {}) {
  return t.api(token, 'POST', '/v1/test/errors/things', body, headers)
}

function errorOf(res: { json(): any }) {
  return res.json().error
}

describe('error envelope', () => {
  before(async () => {
    t = await startTestApp({
      beforeReady(app) {
        app.post('/v1/test/errors/things', { schema: { body: ThingBody } }, async (req, reply) =>
          reply.code(201).send({ object: 'thing', ...(req.body as object) }),
        )
        app.get('/v1/test/errors/boom', async () => {
          throw Object.assign(new Error('database password is hunter2'), { detail: 'stack-secret' })
        })
      },
    })
    token = await (await createTenant(t)).token()
  })
  after(() => t.close())

  test('an error body carries type, code, message, param, a doc_url to its anchor and a req_ request id', async () => {
    const res = await post({})
    assert.equal(res.statusCode, 400)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    const error = errorOf(res)
    assert.deepEqual(Object.keys(error).sort(), [
      'code',
      'doc_url',
      'message',
      'param',
      'request_id',
      'type',
    ])
    assert.equal(error.type, 'invalid_request_error')
    assert.equal(error.code, 'missing_parameter')
    assert.equal(error.param, 'name')
    assert.equal(typeof error.message, 'string')
    assert.ok(error.message.length > 0)
    assert.equal(error.doc_url, `${BASE_URL}/docs/errors#missing_parameter`)
    assert.match(error.request_id, /^req_[0-9A-Z]{26}$/)
    assert.equal(res.headers['svc-request-id'], error.request_id)
  })

  test('a POST without any body reports the first missing required field', async () => {
    const res = await t.api(token, 'POST', '/v1/test/errors/things')
    assert.equal(res.statusCode, 400)
    assert.equal(errorOf(res).code, 'missing_parameter')
    assert.equal(errorOf(res).param, 'name')
  })

  test('an unknown body field answers unknown_parameter naming it', async () => {
    const error = errorOf(await post({ name: 'x', colour: 'red' }))
    assert.equal(error.code, 'unknown_parameter')
    assert.equal(error.param, 'colour')
  })

  test('a query parameter an operation does not take answers unknown_parameter, on reads, writes and the operator API', async () => {
    const read = errorOf(await t.api(token, 'GET', '/v1/cardholders/chd_missing?foo=1'))
    assert.deepEqual([read.code, read.param], ['unknown_parameter', 'foo'])
    const write = errorOf(await t.api(token, 'POST', '/v1/test/errors/things?foo=1', { name: 'x' }))
    assert.deepEqual([write.code, write.param], ['unknown_parameter', 'foo'])
    const operator = await t.app.inject({
      method: 'GET',
      url: '/operator/v1/esim/inventory?limit=5',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
    })
    assert.equal(operator.statusCode, 400)
    assert.deepEqual(
      [errorOf(operator).code, errorOf(operator).param],
      ['unknown_parameter', 'limit'],
    )
  })

  test('a field of the wrong type answers invalid_parameter naming it', async () => {
    const error = errorOf(await post({ name: 'x', quantity: 'three' }))
    assert.equal(error.code, 'invalid_parameter')
    assert.equal(error.param, 'quantity')
  })

  test('a field out of range answers invalid_parameter naming it', async () => {
    const error = errorOf(await post({ name: 'x', quantity: 0 }))
    assert.equal(error.code, 'invalid_parameter')
    assert.equal(error.param, 'quantity')
  })

  test('a value outside a list of allowed values answers invalid_parameter listing them all', async () => {
    const error = errorOf(await post({ name: 'x', size: 'medium' }))
    assert.deepEqual([error.code, error.param], ['invalid_parameter', 'size'])
    assert.match(error.message, /must be one of: small, large/)
    assert.equal(error.errors, undefined)
  })

  test('nested fields are named with dotted paths', async () => {
    const invalid = errorOf(
      await post({ name: 'x', address: { line1: 'a', city: 'b', country: 'fr' } }),
    )
    assert.deepEqual([invalid.code, invalid.param], ['invalid_parameter', 'address.country'])
    const missing = errorOf(await post({ name: 'x', address: { line1: 'a', country: 'FRA' } }))
    assert.deepEqual([missing.code, missing.param], ['missing_parameter', 'address.city'])
    const unknown = errorOf(
      await post({ name: 'x', address: { line1: 'a', city: 'b', country: 'FRA', zip: '1' } }),
    )
    assert.deepEqual([unknown.code, unknown.param], ['unknown_parameter', 'address.zip'])
  })

  test('several failing fields fall back to invalid_parameter with one errors entry per field', async () => {
    const res = await post({
      quantity: -1,
      colour: 'red',
      address: { line1: 'a', city: 'b', country: 'fr' },
    })
    assert.equal(res.statusCode, 400)
    const error = errorOf(res)
    assert.equal(error.code, 'invalid_parameter')
    assert.equal(error.type, 'invalid_request_error')
    assert.equal(error.doc_url, `${BASE_URL}/docs/errors#invalid_parameter`)
    assert.ok(Array.isArray(error.errors))
    const byParam = Object.fromEntries(error.errors.map((e: any) => [e.param, e.code]))
    assert.deepEqual(byParam, {
      name: 'missing_parameter',
      quantity: 'invalid_parameter',
      colour: 'unknown_parameter',
      'address.country': 'invalid_parameter',
    })
    for (const entry of error.errors) {
      assert.deepEqual(Object.keys(entry).sort(), ['code', 'message', 'param'])
      assert.ok(entry.message.length > 0)
    }
  })

  test('a NUL character (U+0000) in a body value or key, or in a query value, answers invalid_parameter naming it', async () => {
    const inValue = await post({ name: 'a\u0000b' })
    assert.equal(inValue.statusCode, 400, inValue.body)
    assert.equal(inValue.json().error.code, 'invalid_parameter')
    assert.equal(inValue.json().error.param, 'name')
    assert.match(inValue.json().error.message, /NUL/)
    const nested = await post({ name: 'a', address: { line1: '1', city: 'x\u0000' } })
    assert.equal(nested.json().error.param, 'address.city')
    const inKey = await post({ name: 'a', 'k\u0000': 1 })
    assert.equal(inKey.statusCode, 400)
    assert.equal(inKey.json().error.code, 'invalid_parameter')
    for (const path of ['/v1/cardholders?reference=a%00b', '/v1/events?type=%00']) {
      const res = await t.api(token, 'GET', path)
      assert.equal(res.statusCode, 400, `${path}: ${res.body}`)
      assert.equal(res.json().error.code, 'invalid_parameter')
    }
  })

  test('a body nested deeper than 64 levels answers invalid_request_body, never a stack overflow', async () => {
    const json = { 'content-type': 'application/json' }
    const deep = await t.api(
      token,
      'POST',
      '/v1/test/errors/things',
      `{"name":${'['.repeat(200_000)}${']'.repeat(200_000)}}`,
      json,
    )
    assert.equal(deep.statusCode, 400, deep.body.slice(0, 300))
    assert.equal(deep.json().error.code, 'invalid_request_body')
    // Brackets inside strings (escaped quotes too) are not nesting.
    const text = await post({ name: `"[${'['.repeat(300)}\\"` })
    assert.equal(text.statusCode, 201, text.body)
    const nested = await t.api(
      token,
      'POST',
      '/v1/test/errors/things',
      `{"name":"a","x":${'['.repeat(60)}${']'.repeat(60)}}`,
      json,
    )
    assert.equal(nested.json().error.code, 'unknown_parameter')
  })

  test('a valid body passes through to the handler', async () => {
    const res = await post({
      name: 'x',
      quantity: 2,
      address: { line1: 'a', city: 'b', country: 'FRA' },
    })
    assert.equal(res.statusCode, 201)
    assert.equal(res.json().name, 'x')
  })

  for (const [label, payload] of [
    ['a body that is not JSON', '{"name": '],
    ['a JSON array body', '[{"name":"x"}]'],
    ['a JSON number body', '42'],
    ['a JSON string body', '"name"'],
    ['a JSON null body', 'null'],
  ] as const) {
    test(`${label} answers 400 invalid_request_body`, async () => {
      const res = await post(payload, { 'content-type': 'application/json' })
      assert.equal(res.statusCode, 400)
      const error = errorOf(res)
      assert.equal(error.code, 'invalid_request_body')
      assert.equal(error.type, 'invalid_request_error')
      assert.match(error.request_id, /^req_/)
    })
  }

  for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
    test(`a body sent as ${type} answers 400 invalid_request_body`, async () => {
      const res = await post('name=x', { 'content-type': type })
      assert.equal(res.statusCode, 400)
      assert.equal(errorOf(res).code, 'invalid_request_body')
    })
  }

  test('a JSON body that would reach an object prototype answers invalid_request_body', async () => {
    for (const payload of [
      '{"name":"x","__proto__":{"admin":true}}',
      '{"name":"x","\\u005f_proto__":{"admin":true}}',
      '{"name":"x","constructor":{"prototype":{"admin":true}}}',
    ]) {
      const res = await post(payload, { 'content-type': 'application/json' })
      assert.equal(res.statusCode, 400, payload)
      assert.equal(errorOf(res).code, 'invalid_request_body', payload)
    }
    assert.equal(({} as Record<string, unknown>).admin, undefined)
  })

  test('application/json with a charset parameter is accepted', async () => {
    const res = await post('{"name":"x"}', { 'content-type': 'application/json; charset=utf-8' })
    assert.equal(res.statusCode, 201)
  })

  test('a body over 1 MiB answers 413 request_too_large in the envelope', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024) }), {
      'content-type': 'application/json',
    })
    assert.equal(res.statusCode, 413)
    const error = errorOf(res)
    assert.equal(error.code, 'request_too_large')
    assert.equal(error.doc_url, `${BASE_URL}/docs/errors#request_too_large`)
    assert.match(error.request_id, /^req_/)
    assert.equal(res.headers['svc-request-id'], error.request_id)
  })

  test('a body just under 1 MiB is accepted', async () => {
    const res = await post(JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 100) }), {
      'content-type': 'application/json',
    })
    assert.equal(res.statusCode, 201)
  })

  test('an unexpected exception answers 500 internal_error with no stack or internal detail', async () => {
    const res = await t.api(token, 'GET', '/v1/test/errors/boom')
    assert.equal(res.statusCode, 500)
    const error = errorOf(res)
    assert.equal(error.code, 'internal_error')
    assert.equal(error.type, 'api_error')
    assert.match(error.request_id, /^req_/)
    assert.doesNotMatch(res.body, /hunter2|stack|stack-secret|at .*\.ts|Error:/)
    assert.deepEqual(Object.keys(res.json()), ['error'])
  })

  /** Sends raw bytes over a real connection and reads the answer until the server closes it. */
  async function rawExchange(request: string): Promise<{ head: string; body: string }> {
    if (!t.app.server.listening) await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as AddressInfo
    const raw = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(request))
      let out = ''
      socket.on('data', (chunk) => {
        out += chunk.toString('utf8')
      })
      socket.on('end', () => resolve(out))
      socket.on('error', reject)
    })
    const [head, body] = raw.split('\r\n\r\n')
    return { head, body }
  }

  test('a request line and headers over 16 KiB answer 431 request_header_too_large in the envelope, over a real connection', async () => {
    const { head, body } = await rawExchange(
      `GET /v1/cardholders?reference=${'r'.repeat(20_000)} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    )
    assert.match(head, /^HTTP\/1\.1 431 /)
    const requestId = /svc-request-id: (req_\w+)/i.exec(head)?.[1]
    const { error } = JSON.parse(body)
    assert.equal(error.code, 'request_header_too_large')
    assert.equal(error.type, 'invalid_request_error')
    assert.equal(error.request_id, requestId)
    assert.equal(error.doc_url, `${BASE_URL}/docs/errors#request_header_too_large`)
  })

  test('at the token endpoint, oversized headers and malformed HTTP answer the flat OAuth invalid_request with no-store', async () => {
    for (const request of [
      `POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nX-Pad: ${'a'.repeat(20_000)}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 0\r\n\r\n`,
      'POST /oauth/token HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n',
    ]) {
      const { head, body } = await rawExchange(request)
      assert.match(head, /^HTTP\/1\.1 400 /)
      assert.match(head, /cache-control: no-store/i)
      const json = JSON.parse(body)
      assert.deepEqual(Object.keys(json).sort(), ['error', 'error_description'])
      assert.equal(json.error, 'invalid_request')
    }
  })

  test("an id far longer than any real one answers the resource's own not-found code", async () => {
    const res = await t.api(token, 'GET', `/v1/cardholders/chd_${'x'.repeat(1000)}`)
    assert.equal(res.statusCode, 404)
    assert.equal(errorOf(res).code, 'cardholder_not_found')
  })

  test('a malformed URL answers the 404 envelope, not a framework error', async () => {
    const res = await t.api(token, 'GET', '/v1/programs/%E0%A4%A')
    assert.equal(res.statusCode, 404)
    assert.equal(errorOf(res).code, 'not_found')
    assert.match(String(res.headers['svc-request-id']), /^req_/)
    assert.doesNotMatch(res.body, /FST_ERR/)
  })

  test('GET /docs/errors has an anchor for every catalogue code', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/errors' })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    for (const code of Object.keys(ERROR_CATALOGUE))
      assert.ok(res.body.includes(`id="${code}"`), `anchor for ${code}`)
  })

  test("every code of the interface's error table is in the catalogue with its status, type and retry rule", () => {
    const catalogue = ERROR_CATALOGUE as Record<
      string,
      { status: number; type: string; retryable: boolean }
    >
    for (const [code, status, type] of INTERFACE_CODES) {
      const spec = catalogue[code]
      assert.ok(spec, `${code} is catalogued`)
      if (status !== null) assert.equal(spec.status, status, `${code} status`)
      if (type !== null) assert.equal(spec.type, type, `${code} type`)
      assert.equal(spec.retryable, RETRYABLE.has(code), `${code} retryable`)
    }
    for (const [code, status] of DECIDED_CODES)
      assert.equal(catalogue[code]?.status, status, `${code} decided`)
  })

  test('every catalogue code has a description shown as its default message', () => {
    for (const [code, spec] of Object.entries(ERROR_CATALOGUE))
      assert.ok(spec.description.length > 10, code)
  })
})
