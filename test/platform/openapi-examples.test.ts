import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { Svc } from '../../sdk/src/index.js'
import { ID_FIELDS } from '../../src/http/openapi-examples.js'
import { needsSdkEntry, SDK_METHODS } from '../../src/http/openapi-sdk.js'
import { isCountryCode } from '../../src/lib/countries.js'
import { startTestApp, type TestApp } from '../helpers/app.js'

// ajv-formats is CommonJS: under NodeNext its function is the default export's `default` (as in src/http/validation.ts).
const addFormats =
  (addFormatsModule as unknown as { default: (a: Ajv2020) => void }).default ?? addFormatsModule

/** Resources of /v1 (and the objects they embed) whose reference must show a sample. */
const COVERED = [
  'Program',
  'Event',
  'WebhookEndpoint',
  'WebhookEndpointDeleted',
  'WebhookDelivery',
  'WebhookDeliveryAttempt',
  'Replay',
  'OAuthClient',
  'Cardholder',
  'Address',
  'KycAttestation',
  'KycIdentity',
  'KycDocumentMetadata',
  'Account',
  'LedgerEntry',
  'ProcessorFault',
  'Card',
  'DeliveryAddress',
  'CardShipping',
  'SpendingControlsView',
  'PinKey',
  'PinVerification',
  'CardDetails',
  'CardRevealSession',
  'Authorization',
  'AuthorizationRule',
  'AuthorizationRuleDeleted',
  'Merchant',
  'Transaction',
  'Dispute',
  'NetworkToken',
  'Authentication',
  'AuthenticationMerchant',
  'Report',
  'EsimPackage',
  'EsimTopUp',
  'EsimOrder',
  'EsimSummary',
  'Esim',
  'EsimProvisioningSimulation',
  'EsimH5Link',
]

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const DOC_ID = 'urn:svc:openapi'
const ID = /^[a-z0-9]+_[0-9A-HJKMNP-TV-Z]{26}$/

let t: TestApp
let doc: any

interface MediaExample {
  where: string
  schema: any
  value: unknown
}

/** Examples @fastify/swagger moved from a route's top-level response schema onto its media object (`example` / `examples`). */
function mediaExamples(): MediaExample[] {
  const out: MediaExample[] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      for (const [status, response] of Object.entries<any>(op.responses ?? {})) {
        if (!status.startsWith('2')) continue
        for (const [type, media] of Object.entries<any>(response.content ?? {})) {
          const where = `${method.toUpperCase()} ${path} ${status} ${type}`
          if (media.example !== undefined)
            out.push({ where, schema: media.schema, value: media.example })
          for (const [name, ex] of Object.entries<any>(media.examples ?? {}))
            out.push({ where: `${where} (${name})`, schema: media.schema, value: ex.value })
        }
      }
    }
  }
  return out
}

/** Every example shown for a component: its own `examples`, and those of the /v1 responses that are exactly it. */
function examplesOf(name: string): unknown[] {
  const own = doc.components.schemas[name]?.examples ?? []
  const ref = `#/components/schemas/${name}`
  const onMedia = mediaExamples()
    .filter((m) => m.where.includes(' /v1/') && m.schema?.$ref === ref)
    .map((m) => m.value)
  return [...own, ...onMedia]
}

/**
 * A copy of a schema where every object that lists its properties accepts no others (unless it says so): an example
 * must not show a field the API never returns. `$ref`s are pointed at the registered document.
 */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed)
  if (!schema || typeof schema !== 'object') return schema
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/'))
      out[key] = DOC_ID + value
    else if (key === 'examples' || key === 'example') out[key] = value
    else out[key] = closed(value)
  }
  if (
    out.properties &&
    typeof out.properties === 'object' &&
    out.additionalProperties === undefined
  )
    out.additionalProperties = false
  return out
}

function makeAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addFormat('country', { type: 'string', validate: isCountryCode })
  ajv.addSchema({ $id: DOC_ID, components: closed(doc.components) })
  return ajv
}

/** Strings under `id` / `…_id` / `…_ids` that look like our ids must be real ids: prefix, `_`, 26 Crockford characters. */
function badIds(value: unknown, key = ''): string[] {
  if (Array.isArray(value)) return value.flatMap((v) => badIds(v, key))
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => badIds(v, k))
  const idKey = key === 'id' || key.endsWith('_id') || key.endsWith('_ids')
  if (idKey && typeof value === 'string' && /^[a-z0-9]+_/.test(value) && !ID.test(value))
    return [`${key}: ${value}`]
  return []
}

before(async () => {
  t = await startTestApp()
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
  assert.equal(res.statusCode, 200)
  doc = res.json()
})
after(() => t.close())

describe('OpenAPI examples of /v1 resources', () => {
  test('every covered resource schema is in the document with at least one example', () => {
    const missing: string[] = []
    for (const name of COVERED) {
      assert.ok(doc.components.schemas[name], `components.schemas.${name} is missing`)
      if (examplesOf(name).length === 0) missing.push(name)
    }
    assert.deepEqual(missing, [], `schemas without an example: ${missing.join(', ')}`)
  })

  test('covered schemas embedded in other responses carry `examples` on the component itself', () => {
    // A schema also nested in a list or another object keeps its examples on the component (the one shown there).
    const nested = new Set<string>()
    const walk = (s: any, inside: boolean): void => {
      if (!s || typeof s !== 'object') return
      if (Array.isArray(s)) {
        s.forEach((v) => walk(v, inside))
        return
      }
      if (inside && typeof s.$ref === 'string') nested.add(s.$ref.split('/').pop())
      for (const [k, v] of Object.entries(s)) if (k !== 'examples' && k !== 'example') walk(v, true)
    }
    for (const schema of Object.values<any>(doc.components.schemas)) walk(schema, false)
    const missing = COVERED.filter(
      (n) => nested.has(n) && !(doc.components.schemas[n].examples?.length > 0),
    )
    assert.deepEqual(missing, [])
  })

  test('every `examples` entry of every component schema validates against that schema', () => {
    const ajv = makeAjv()
    const failures: string[] = []
    for (const [name, schema] of Object.entries<any>(doc.components.schemas)) {
      if (schema.examples === undefined) continue
      assert.ok(
        Array.isArray(schema.examples) && schema.examples.length > 0,
        `${name}.examples is an empty or non-array value`,
      )
      const validate = ajv.getSchema(`${DOC_ID}#/components/schemas/${name}`)
      assert.ok(validate, `${name} does not compile`)
      schema.examples.forEach((example: unknown, i: number) => {
        if (!validate(example))
          failures.push(`${name}.examples[${i}]: ${ajv.errorsText(validate.errors)}`)
      })
    }
    assert.deepEqual(failures, [])
  })

  test('every example shown on a 2xx response validates against the response schema', () => {
    const ajv = makeAjv()
    const failures: string[] = []
    const examples = mediaExamples()
    assert.ok(examples.length > 0)
    for (const { where, schema, value } of examples) {
      const validate = ajv.compile(closed(schema) as object)
      if (!validate(value)) failures.push(`${where}: ${ajv.errorsText(validate.errors)}`)
    }
    assert.deepEqual(failures, [])
  })

  test('ids in the examples of covered resources have the real id format', () => {
    const bad = COVERED.flatMap((name) =>
      examplesOf(name).flatMap((e) => badIds(e).map((b) => `${name} ${b}`)),
    )
    assert.deepEqual(bad, [])
  })
})

/** Every operation of the document as [KEY, method, path, operation], KEY as in SDK_METHODS (`POST /v1/cards`). */
function operations(): [string, string, string, any][] {
  const out: [string, string, string, any][] = []
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const method of METHODS)
      if (item[method]) out.push([`${method.toUpperCase()} ${path}`, method, path, item[method]])
  return out
}

function deref(schema: any): any {
  let s = schema
  while (s?.$ref) s = doc.components.schemas[s.$ref.split('/').pop()]
  return s
}

/** The examples a reader sees for a request body: the media's own, else its schema's. */
function requestExamples(media: any): unknown[] {
  if (media.example !== undefined) return [media.example]
  if (media.examples) return Object.values<any>(media.examples).map((e) => e.value)
  return deref(media.schema)?.examples ?? []
}

/** The strings of a value, with where they are. */
function strings(value: unknown, where = ''): [string, string][] {
  if (typeof value === 'string') return [[where, value]]
  if (Array.isArray(value)) return value.flatMap((v, i) => strings(v, `${where}[${i}]`))
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => strings(v, where ? `${where}.${k}` : k))
  return []
}

interface Sent {
  method: string
  url: URL
  body: string | undefined
}

/** A client whose transport records each call and refuses it (400), so a sample stops after its first request. */
function recordingSvc(): { svc: Svc; sent: Sent[] } {
  const sent: Sent[] = []
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const svc = new Svc({
    clientId: 'oc_01JD3R5M7N8P9Q2R3S4T5V6W7X',
    privateKey,
    baseUrl: 'http://svc.test',
    maxRetries: 0,
    fetch: async (input, init) => {
      const url = new URL(String(input))
      sent.push({ method: String(init?.method), url, body: init?.body as string | undefined })
      if (url.pathname === '/oauth/token')
        return Response.json({
          access_token: 'at_test_sample',
          token_type: 'Bearer',
          expires_in: 900,
        })
      const error = {
        type: 'invalid_request_error',
        code: 'invalid_parameter',
        message: 'recorded',
      }
      return Response.json(
        { error: { ...error, doc_url: 'x', request_id: 'req_x' } },
        { status: 400 },
      )
    },
  })
  return { svc, sent }
}

const AsyncFunction = (async () => {}).constructor as new (
  ...args: string[]
) => (...a: unknown[]) => Promise<void>

describe('OpenAPI request examples and code samples', () => {
  test('every request body shows an example; every request example validates against its schema', () => {
    const ajv = makeAjv()
    const missing: string[] = []
    const failures: string[] = []
    let bodies = 0
    for (const [key, , , op] of operations()) {
      for (const [type, media] of Object.entries<any>(op.requestBody?.content ?? {})) {
        bodies++
        const examples = requestExamples(media)
        if (examples.length === 0) missing.push(`${key} ${type}`)
        const validate = ajv.compile(closed(media.schema) as object)
        examples.forEach((example, i) => {
          if (!validate(example))
            failures.push(`${key} ${type} example ${i}: ${ajv.errorsText(validate.errors)}`)
        })
      }
    }
    assert.ok(bodies >= 76, `${bodies} request bodies`)
    assert.deepEqual(missing, [], 'request bodies without an example')
    assert.deepEqual(failures, [])
  })

  test('request examples are realistic: no placeholder "string", ids of known kinds in the real format', () => {
    const prefixes = new Set(Object.values(ID_FIELDS))
    const bad: string[] = []
    for (const [key, , , op] of operations()) {
      for (const media of Object.values<any>(op.requestBody?.content ?? {})) {
        for (const example of requestExamples(media)) {
          for (const [where, value] of strings(example))
            if (value === 'string' || value === '') bad.push(`${key} ${where}: "${value}"`)
          bad.push(...badIds(example).map((b) => `${key} ${b}`))
          for (const [where, value] of strings(example)) {
            const prefix = /^([a-z0-9]+)_[0-9A-HJKMNP-TV-Z]{26}$/.exec(value)?.[1]
            if (prefix && !prefixes.has(prefix as never))
              bad.push(
                `${key} ${where}: ${value} has a prefix ID_FIELDS (src/http/openapi-examples.ts) does not know`,
              )
          }
        }
      }
    }
    assert.deepEqual(bad, [])
  })

  test('every /v1 operation has an entry in SDK_METHODS (src/http/openapi-sdk.ts), every entry an operation', () => {
    const keys = operations().map(([key]) => key)
    const missing = operations()
      .filter(([key, , path]) => needsSdkEntry(path) && !(key in SDK_METHODS))
      .map(([key]) => key)
    assert.deepEqual(
      missing,
      [],
      'add these to SDK_METHODS in src/http/openapi-sdk.ts: the @svc/sdk method that calls each, ' +
        'or null when the SDK has none',
    )
    const stale = Object.keys(SDK_METHODS).filter((key) => !keys.includes(key))
    assert.deepEqual(stale, [], 'SDK_METHODS entries whose operation is not in /openapi.json')
  })

  test('every method SDK_METHODS names is a function of a Svc instance', () => {
    const { svc } = recordingSvc()
    const wrong: string[] = []
    for (const [key, entry] of Object.entries(SDK_METHODS)) {
      if (entry === null) continue
      const name = typeof entry === 'string' ? entry : entry.method
      const parts = name.split('.')
      const owner = parts.slice(0, -1).reduce<any>((o, p) => o?.[p], svc)
      if (typeof owner?.[parts.at(-1)!] !== 'function')
        wrong.push(`${key}: svc.${name} is not a method of Svc`)
    }
    assert.deepEqual(wrong, [])
  })

  test('every operation carries a curl sample, and an SDK sample when SDK_METHODS has an entry', () => {
    const wrong: string[] = []
    for (const [key, method, path, op] of operations()) {
      const samples: any[] = op['x-codeSamples'] ?? []
      const curl = samples.find((s) => s.label === 'curl')
      const sdk = samples.find((s) => s.label === 'SDK')
      if (curl?.lang !== 'Shell') wrong.push(`${key}: no curl sample`)
      if (key in SDK_METHODS !== (sdk?.lang === 'JavaScript')) wrong.push(`${key}: SDK sample`)
      if (!curl) continue
      const source: string = curl.source
      const verb = method.toUpperCase()
      if (verb !== 'GET' && !source.includes(` -X ${verb} `))
        wrong.push(`${key}: curl does not ${verb}`)
      const url = /"\$SVC_BASE_URL([^"?]+)/.exec(source)?.[1] ?? ''
      const pattern = new RegExp(`^${path.replace(/\{[^}]+\}/g, '[^/]+')}$`)
      if (!pattern.test(url) || url.includes('{')) wrong.push(`${key}: curl calls ${url}`)
      const v1Write = path.startsWith('/v1/') && (method === 'post' || method === 'patch')
      const usesKey = op.parameters?.some(
        (p: any) => p.name === 'Idempotency-Key' && !/unused/.test(p.description),
      )
      if (v1Write && usesKey !== source.includes('-H "Idempotency-Key: '))
        wrong.push(`${key}: Idempotency-Key`)
      if (path.startsWith('/v1/') && !source.includes('-H "Authorization: Bearer $SVC_TOKEN"'))
        wrong.push(`${key}: no token`)
      const media = op.requestBody?.content?.['application/json']
      const example = media ? requestExamples(media)[0] : undefined
      const data = /-d '([\s\S]*)'$/.exec(source)?.[1]
      if (example && Object.keys(example).length > 0) {
        if (data === undefined) wrong.push(`${key}: curl sends no body`)
        else assert.deepEqual(JSON.parse(data), example, `${key}: curl sends the request example`)
      }
    }
    assert.deepEqual(wrong, [])
  })

  test('every SDK sample, run against a recording transport, sends its operation, ids and body', async () => {
    const wrong: string[] = []
    for (const [key, method, path, op] of operations()) {
      const sdk = (op['x-codeSamples'] ?? []).find((s: any) => s.label === 'SDK')
      if (!sdk) continue
      const { svc, sent } = recordingSvc()
      try {
        await new AsyncFunction('svc', 'console', sdk.source)(svc, { log() {} })
      } catch {
        // The transport refuses every call: the sample ends on that refusal once its request is recorded.
      }
      const call =
        path === '/oauth/token' ? sent[0] : sent.find((s) => s.url.pathname !== '/oauth/token')
      const curlUrl = /"\$SVC_BASE_URL([^"]+)"/.exec(op['x-codeSamples'][0].source)?.[1] ?? ''
      const expected = new URL(`http://svc.test${curlUrl}`)
      if (!call) {
        wrong.push(`${key}: the SDK sample sent nothing`)
        continue
      }
      if (call.method !== method.toUpperCase() || call.url.pathname !== expected.pathname)
        wrong.push(
          `${key}: the SDK sample sent ${call.method} ${call.url.pathname}, not ${expected.pathname}`,
        )
      for (const [name, value] of expected.searchParams)
        if (path !== '/v1/events/stream' && call.url.searchParams.get(name) !== value)
          wrong.push(`${key}: query ${name} is ${call.url.searchParams.get(name)}, not ${value}`)
      const media = op.requestBody?.content?.['application/json']
      const example = media ? requestExamples(media)[0] : undefined
      if (example !== undefined && call.body !== undefined)
        assert.deepEqual(
          JSON.parse(call.body),
          example,
          `${key}: the SDK sends the request example`,
        )
    }
    assert.deepEqual(wrong, [])
  })
})
