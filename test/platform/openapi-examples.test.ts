import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
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

describe('OpenAPI examples of /v1 resources', () => {
  before(async () => {
    t = await startTestApp()
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' })
    assert.equal(res.statusCode, 200)
    doc = res.json()
  })
  after(() => t.close())

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
