import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { brotliDecompressSync, gunzipSync } from 'node:zlib'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Type } from 'typebox'
import { ERROR_CATALOGUE } from '../../src/http/errors.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

const METHODS = ['get', 'post', 'put', 'patch', 'delete']

let t: TestApp
let doc: any

/** Every operation of the document as [method, path, operation]. */
function operations(): [string, string, any][] {
  const out: [string, string, any][] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) if (item[method]) out.push([method, path, item[method]])
  }
  return out
}

/** An operation's responses, those shared through `components.responses` resolved. */
function responsesOf(op: any): Record<string, any> {
  return Object.fromEntries(
    Object.entries<any>(op.responses ?? {}).map(([status, r]) => [
      status,
      r.$ref ? doc.components.responses[r.$ref.split('/').pop()] : r,
    ]),
  )
}

/** Error codes an operation documents, read from its response descriptions. */
function documentedCodes(op: any): Map<string, string> {
  const codes = new Map<string, string>()
  for (const [status, response] of Object.entries<any>(responsesOf(op))) {
    for (const match of String(response.description ?? '').matchAll(/`([a-z_]+)`/g))
      codes.set(match[1], status)
  }
  return codes
}

describe('OpenAPI document and reference', () => {
  before(async () => {
    t = await startTestApp({
      beforeReady(app) {
        app.post(
          '/v1/test/openapi/widgets/:widget_id/pin',
          {
            config: {
              scope: 'cards:write',
              errors: ['card_not_found', 'pin_invalid'],
              capability: { name: 'card_pin', programOf: async () => null },
            },
            schema: {
              tags: ['Test'],
              summary: 'Set a widget PIN',
              params: Type.Object({ widget_id: Type.String() }),
              body: Type.Object({ pin: Type.String() }, { additionalProperties: false }),
              response: { 200: Type.Object({ object: Type.Literal('widget') }) },
            },
          },
          async () => ({ object: 'widget' as const }),
        )
      },
    })
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^application\/json/)
    doc = res.json()
  })
  after(() => t.close())

  test('/openapi.json is OpenAPI 3.1 with info.version 1.0.0', () => {
    assert.match(doc.openapi, /^3\.1\.\d+$/)
    assert.equal(doc.info.version, '1.0.0')
    assert.equal(typeof doc.info.title, 'string')
  })

  test('the document validates against the OpenAPI 3.1 schema', async () => {
    const validator = new Validator()
    const result = await validator.validate(structuredClone(doc))
    assert.equal(result.valid, true, JSON.stringify(result.errors, null, 2)?.slice(0, 2000))
    assert.equal(validator.version, '3.1')
  })

  test('the reference opens on getting a token; simulators, operator and platform come last', () => {
    const description: string = doc.info.description
    const headings = [...description.matchAll(/^(#+) (.+)$/gm)].map((m) => m[2])
    assert.equal(headings[0], 'Getting an access token', 'the first section of the reference')
    const section = description.slice(description.indexOf('# Getting an access token'))
    for (const needed of [
      'npx svc token',
      'POST /oauth/token',
      'grant_type=client_credentials',
      'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      `aud\` exactly \`${doc.servers[0].url}/oauth/token`,
      'new Svc({',
    ])
      assert.ok(section.includes(needed), `the token section shows ${needed}`)
    const names = doc.tags.map((tag: { name: string }) => tag.name)
    assert.equal(names[0], 'OAuth')
    assert.deepEqual(names.slice(-3), ['Simulator', 'Operator', 'Platform'])
    const used = new Set(operations().flatMap(([, , op]) => op.tags ?? []))
    assert.deepEqual(
      names.slice().sort(),
      [...used].sort(),
      'every tag used is listed once, and only those',
    )
    assert.deepEqual(doc.paths['/openapi.json'].get.tags, ['Platform'])
  })

  test('/openapi.json is serialized once: brotli or gzip as asked, an ETag, 304 when the caller holds it', async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    assert.equal(plain.headers['content-encoding'], undefined)
    const etag = String(plain.headers.etag)
    assert.match(etag, /^"[\w-]{27}"$/)
    const ask = (encoding: string) =>
      t.app.inject({
        method: 'GET',
        url: '/openapi.json',
        headers: { 'accept-encoding': encoding },
      })
    const br = await ask('gzip, deflate, br')
    assert.equal(br.headers['content-encoding'], 'br')
    assert.equal(brotliDecompressSync(br.rawPayload).toString('utf8'), plain.body)
    assert.ok(br.rawPayload.length < plain.body.length / 8, 'compressed to under an eighth')
    const gzip = await ask('gzip, br;q=0')
    assert.equal(gzip.headers['content-encoding'], 'gzip')
    assert.equal(gunzipSync(gzip.rawPayload).toString('utf8'), plain.body)
    assert.ok(gzip.rawPayload.length < plain.body.length / 5, 'compressed to under a fifth')
    assert.equal(br.headers.etag, etag, 'one ETag for the document, whatever its coding')
    assert.match(String(br.headers.vary), /Accept-Encoding/)
    const again = await t.app.inject({
      method: 'GET',
      url: '/openapi.json',
      headers: { 'if-none-match': etag },
    })
    assert.equal(again.statusCode, 304)
    assert.equal(again.body, '')
  })

  test('the platform endpoints are in it and internal pages are not', () => {
    assert.ok(doc.paths['/v1/programs']?.get, 'GET /v1/programs')
    assert.ok(doc.paths['/oauth/token']?.post, 'POST /oauth/token')
    // The operations decisions.md names are listed, without security; HTML pages and the metrics scrape are not.
    for (const path of ['/healthz', '/readyz', '/openapi.json']) {
      assert.ok(doc.paths[path]?.get, `GET ${path}`)
      assert.equal(doc.paths[path].get.security, undefined, `${path} needs no token`)
    }
    assert.ok(doc.paths['/readyz'].get.responses['503'], 'readyz documents 503')
    for (const hidden of [
      '/metrics',
      '/',
      '/docs',
      '/docs/errors',
      '/docs/guides',
      '/docs/guides/{name}',
      '/docs/assets/{file}',
    ])
      assert.equal(doc.paths[hidden], undefined, hidden)
  })

  test('every /v1 operation lists its error responses with the shared Error schema', () => {
    const v1 = operations().filter(([, path]) => path.startsWith('/v1'))
    assert.ok(v1.length > 0)
    for (const [method, path, op] of v1) {
      const name = `${method.toUpperCase()} ${path}`
      const codes = documentedCodes(op)
      for (const code of [
        'missing_credentials',
        'invalid_access_token',
        'ip_not_allowed',
        'environment_mismatch',
        'rate_limited',
        'internal_error',
      ]) {
        assert.equal(
          codes.get(code),
          String(ERROR_CATALOGUE[code as keyof typeof ERROR_CATALOGUE].status),
          `${name} lists ${code}`,
        )
      }
      // Events have no route scope: each is read with the scope of its object (docs/decisions/event-scopes.md).
      const objectScoped = path.startsWith('/v1/events')
      const scoped = op['x-svc-scope'] !== undefined || objectScoped
      assert.equal(
        codes.has('insufficient_scope'),
        scoped,
        `${name}: insufficient_scope exactly when a scope is required`,
      )
      if (op['x-svc-capability'] || path.includes('{'))
        assert.equal(codes.get('not_found'), '404', `${name} lists not_found`)
      if (method === 'post' || method === 'patch') {
        const keyParam = op.parameters?.find(
          (p: any) => p.in === 'header' && p.name === 'Idempotency-Key',
        )
        assert.ok(keyParam, `${name} accepts Idempotency-Key`)
        const usesKey = !/unused/.test(keyParam.description)
        for (const code of ['invalid_request_body', 'missing_parameter', 'unknown_parameter'])
          assert.ok(codes.has(code), `${name} lists ${code}`)
        for (const code of ['idempotency_key_reuse', 'idempotency_request_in_progress'])
          assert.equal(codes.has(code), usesKey, `${name}: ${code} exactly when the key is used`)
      }
      for (const [status, response] of Object.entries<any>(responsesOf(op))) {
        if (Number(status) < 400) continue
        assert.equal(
          response.content['application/json'].schema.$ref,
          '#/components/schemas/Error',
          `${name} ${status}`,
        )
      }
      assert.deepEqual(op.security, [{ bearer: [] }], `${name} security`)
    }
    assert.ok(
      doc.components.schemas.Error.properties.error.properties.code.enum.includes(
        'idempotency_key_reuse',
      ),
    )
  })

  test('the token endpoint documents its flat OAuth refusals (401 invalid_client among them) and no-store, not the envelope', () => {
    const op = { responses: responsesOf(doc.paths['/oauth/token'].post) }
    assert.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '401', '500'])
    assert.equal(op.responses['200'].headers['Cache-Control'].schema.const, 'no-store')
    assert.match(op.responses['401'].description, /`invalid_client`/)
    for (const code of [
      'invalid_grant',
      'invalid_scope',
      'invalid_request',
      'unsupported_grant_type',
    ])
      assert.match(op.responses['400'].description, new RegExp(`\`${code}\``))
    for (const status of ['400', '401', '500']) {
      assert.equal(
        op.responses[status].content['application/json'].schema.$ref,
        '#/components/schemas/OAuthError',
      )
      assert.equal(op.responses[status].headers['Cache-Control'].schema.const, 'no-store')
    }
    assert.deepEqual(doc.components.schemas.OAuthError.required, ['error', 'error_description'])
  })

  test('operations that accept Idempotency-Key without using it say so and list no idempotency conflicts', () => {
    for (const path of ['/v1/cards/{card_id}/pin-key', '/v1/cards/{card_id}/details']) {
      const op = doc.paths[path].post
      const param = op.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key')
      assert.match(param.description, /unused/, path)
      assert.ok(!JSON.stringify(responsesOf(op)).includes('idempotency_key_reuse'), path)
    }
    const create = doc.paths['/v1/cards'].post
    assert.match(
      create.parameters.find((p: { name: string }) => p.name === 'Idempotency-Key').description,
      /replays/,
    )
    assert.ok(JSON.stringify(responsesOf(create)).includes('idempotency_key_reuse'))
  })

  test('operator operations document 201 where they create, their own not-found codes, and no idempotency', () => {
    for (const path of [
      '/operator/v1/organizations',
      '/operator/v1/programs',
      '/operator/v1/clients',
      '/operator/v1/esim/inventory',
      '/operator/v1/esim/packages',
    ]) {
      const op = doc.paths[path].post
      assert.ok(op.responses['201'], `POST ${path} documents 201`)
      assert.equal(op.responses['200'], undefined, `POST ${path} does not document 200`)
      const codes = documentedCodes(op)
      assert.ok(
        !codes.has('idempotency_key_reuse') && !codes.has('idempotency_request_in_progress'),
        `POST ${path} lists no idempotency errors`,
      )
      assert.ok(
        !op.parameters?.some((p: any) => p.name === 'Idempotency-Key'),
        `POST ${path} takes no Idempotency-Key`,
      )
    }
    assert.equal(
      documentedCodes(doc.paths['/operator/v1/organizations/{id}'].get).get(
        'organization_not_found',
      ),
      '404',
    )
    assert.equal(
      documentedCodes(doc.paths['/operator/v1/programs'].post).get('organization_not_found'),
      '404',
    )
    assert.equal(
      documentedCodes(doc.paths['/operator/v1/clients/{id}'].patch).get('client_not_found'),
      '404',
    )
    assert.equal(
      documentedCodes(doc.paths['/operator/v1/esim/packages/{package_id}'].patch).get(
        'esim_package_unavailable',
      ),
      '422',
    )
  })

  test("the interface's named schemas are components, referenced by the operations that use them", () => {
    const schemas = doc.components.schemas
    for (const name of [
      'Program',
      'Event',
      'Cardholder',
      'CardholderCreateRequest',
      'CardholderUpdateRequest',
      'KycAttestationRequest',
      'KycAttestation',
      'Account',
      'AccountAdjustmentRequest',
      'Card',
      'WebhookEndpoint',
      'WebhookEndpointCreateRequest',
      'Error',
    ]) {
      assert.equal(typeof schemas[name], 'object', `components.schemas.${name}`)
    }
    const create = doc.paths['/v1/cardholders'].post
    assert.equal(
      create.requestBody.content['application/json'].schema.$ref,
      '#/components/schemas/CardholderCreateRequest',
    )
    assert.equal(
      create.responses['201'].content['application/json'].schema.$ref,
      '#/components/schemas/Cardholder',
    )
    const list =
      schemas[
        doc.paths['/v1/programs'].get.responses['200'].content['application/json'].schema.$ref
          .split('/')
          .pop()
      ]
    assert.deepEqual(list.properties.data.items, { $ref: '#/components/schemas/Program' })
    assert.deepEqual(list.required.sort(), ['data', 'has_more', 'next_cursor', 'object', 'url'])
  })

  test('list operations document the pagination parameters and expired_cursor', () => {
    const op = doc.paths['/v1/programs'].get
    const names = op.parameters
      .filter((p: any) => p.in === 'query')
      .map((p: any) => p.name)
      .sort()
    assert.deepEqual(names, ['ending_before', 'limit', 'starting_after'])
    const limit = op.parameters.find((p: any) => p.name === 'limit')
    assert.deepEqual(
      [limit.schema.minimum, limit.schema.maximum, limit.schema.default],
      [1, 100, 25],
    )
    assert.equal(documentedCodes(op).get('expired_cursor'), '400')
  })

  test('an error response many operations answer alike is one component, referred to by each', () => {
    const refs = new Set(
      operations()
        .filter(([, path]) => path.startsWith('/v1/'))
        .map(([, , op]) => op.responses['401'].$ref),
    )
    assert.deepEqual(
      [...refs],
      ['#/components/responses/missing_credentials__invalid_access_token'],
    )
    const shared = doc.components.responses.missing_credentials__invalid_access_token
    assert.equal(shared.content['application/json'].schema.$ref, '#/components/schemas/Error')
    assert.deepEqual(shared.headers['Svc-Request-Id'], {
      $ref: '#/components/headers/Svc-Request-Id',
    })
  })

  test('a 429 documents Retry-After', () => {
    const op = doc.paths['/v1/programs'].get
    assert.ok(responsesOf(op)['429'].headers['Retry-After'])
  })

  test('an operation with a capability rule carries x-svc-capability, its own errors and not_found', () => {
    const op = doc.paths['/v1/test/openapi/widgets/{widget_id}/pin'].post
    assert.equal(op['x-svc-capability'], 'card_pin')
    assert.equal(op['x-svc-scope'], 'cards:write')
    const codes = documentedCodes(op)
    assert.equal(codes.get('card_not_found'), '404')
    assert.equal(codes.get('not_found'), '404')
    assert.equal(codes.get('pin_invalid'), '422')
    assert.equal(doc.paths['/v1/programs'].get['x-svc-capability'], undefined)
  })

  test('/docs is the reference of this document, rendered on the server', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' })
    assert.equal(res.statusCode, 200)
    assert.match(String(res.headers['content-type']), /^text\/html/)
    assert.match(res.body, /^<!doctype html>/i)
    assert.ok(res.body.includes(`<h1>${doc.info.title}</h1>`))
    for (const [method, path] of operations())
      assert.ok(
        res.body.includes(
          `<span class="method ${method}">${method.toUpperCase()}</span> <code>${path}</code>`,
        ),
        `${method} ${path}`,
      )
    for (const src of res.body.matchAll(/<script src="([^"]+)"/g))
      assert.match(src[1], /^\/docs\/assets\//, 'scripts come from this host')
    assert.ok(res.body.includes('href="/docs/errors"'))
  })

  test('every response is described: 2xx by its status name, never "Default Response"', () => {
    const defaults = operations().flatMap(([method, path, op]) =>
      Object.entries<any>(responsesOf(op))
        .filter(([, r]) => !r.description || r.description === 'Default Response')
        .map(([status]) => `${method.toUpperCase()} ${path} ${status}`),
    )
    assert.deepEqual(defaults, [])
    assert.equal(doc.paths['/v1/cards'].post.responses['201'].description, 'Created')
    assert.equal(doc.paths['/v1/programs'].get.responses['200'].description, 'OK')
    assert.equal(responsesOf(doc.paths['/readyz'].get)['503'].description, 'Service Unavailable')
  })

  test('a union of literals is one enum and a nullable simple type a type array, as renderers show them best', () => {
    const create = doc.components.schemas.CardCreateRequest.properties
    assert.deepEqual(create.form_factor, { type: 'string', enum: ['virtual', 'physical'] })
    assert.deepEqual(create.card_type.enum, ['debit', 'prepaid', 'credit'])
    assert.deepEqual(doc.components.schemas.KycAttestation.properties.expires_at, {
      type: ['string', 'null'],
      format: 'date-time',
    })
    // Nothing is left as an anyOf whose branches are all literals.
    const literal = (b: any) =>
      Object.keys(b).every((k) => k === 'type' || k === 'enum' || k === 'const') &&
      (b.enum?.length === 1 || 'const' in b || b.type === 'null')
    const left: string[] = []
    const walk = (node: unknown, where: string): void => {
      if (!node || typeof node !== 'object') return
      if (Array.isArray(node)) {
        node.forEach((n, i) => walk(n, `${where}/${i}`))
        return
      }
      const s = node as Record<string, any>
      if (Array.isArray(s.anyOf) && s.anyOf.every(literal)) left.push(where)
      for (const [k, v] of Object.entries(s))
        if (k !== 'examples' && k !== 'example') walk(v, `${where}/${k}`)
    }
    walk(doc, '#')
    assert.deepEqual(left, [])
  })
})
