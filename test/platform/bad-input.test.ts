import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { signClientAssertion } from '../../src/lib/client-assertion.js'
import {
  OPERATOR_TOKEN,
  TOKEN_URL,
  createTenant,
  newKeyPair,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { seedSandbox, type ObjectSet } from '../security/support.js'

// Every operation of /openapi.json (every path × method) gets bad inputs derived from its own schema: each body
// property (top level, one level of nesting, the first item of arrays of objects, a key of free-form maps), each
// query and path parameter. Bad inputs: an unpaired UTF-16 surrogate (high and low), NUL, a 100 kB string, a
// deeply nested value and the wrong types; plus a whole body with a surrogate in an object key. Whatever the
// operation answers, it must not be a 5xx, and a 4xx must be the standard envelope (the flat OAuth shape at
// /oauth/token). Values PostgreSQL text cannot hold in a body must be `400 invalid_parameter` naming the field.
// The other fields of a body stay valid (a sample built from the schema, with the seeded objects' real ids),
// so a bad value reaches as far into the handler as it can. The routes left out of /openapi.json (the hosted
// eSIM pages, HTML) get their own sweep below.

let t: TestApp
let tenant: TestClient
let token: string
let own: ObjectSet
let doc: any
const ids: Record<string, string> = {}

before(async () => {
  t = await startTestApp({ env: { SVC_RELEASES: 'three_d_secure' } })
  tenant = await createTenant(t)
  token = await tenant.token()
  own = await seedSandbox(t, tenant, token)
  const first = (kind: keyof ObjectSet) => own[kind]![0].id
  Object.assign(ids, {
    cardholder_id: first('cardholder'),
    account_id: first('account'),
    card_id: first('card'),
    authorization_id: first('authorization'),
    transaction_id: first('transaction'),
    dispute_id: first('dispute'),
    network_token_id: first('network_token'),
    authentication_id: first('authentication'),
    order_id: first('esim_order'),
    esim_id: first('esim'),
    webhook_endpoint_id: first('webhook_endpoint'),
    event_id: first('event'),
    report_id: first('report'),
    program_id: tenant.programs.full.id,
    organization_id: tenant.organizationId,
    client_id: tenant.clientId,
    // Path parameters that are values rather than ids: a currency pair of the rate table.
    base: 'EUR',
    quote: 'USD',
  })
  const packages = (await t.api(token, 'GET', '/v1/esim/packages?status=on_sale&limit=1')).json()
  ids.package_id = packages.data[0].id
  const topUps = (await t.api(token, 'GET', `/v1/esim/esims/${ids.esim_id}/top_ups`)).json()
  if (topUps.data?.[0]?.id) ids.top_up_id = topUps.data[0].id
  doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
})
after(async () => {
  await t?.close()
})

const METHODS = ['get', 'post', 'put', 'patch', 'delete']
const HUGE = 'x'.repeat(100 * 1024)
/** Path and query values are held to 10 kB: over real HTTP the request line and headers stop at 16 KiB (431). */
const LONG_IN_URL = 'x'.repeat(10 * 1024)
/** 40 levels: deep, but inside the 64-level limit the parser enforces, so it reaches validation and the handler. */
const DEEP = Array.from({ length: 40 }).reduce<unknown>((inner) => ({ a: inner }), 'deep')

interface Operation {
  method: string
  path: string
  op: any
  label: string
}

function operations(): Operation[] {
  const out: Operation[] = []
  for (const [path, item] of Object.entries<any>(doc.paths)) {
    for (const method of METHODS)
      if (item[method])
        out.push({
          method: method.toUpperCase(),
          path,
          op: item[method],
          label: `${method.toUpperCase()} ${path}`,
        })
  }
  // Operations that end an object's life run last, so the earlier ones still act on live objects.
  const ending =
    /\/(close|delete|withdraw|revoke|expire|reverse|block|resolve|capture|replace|settle)$|^DELETE /
  return [...out.filter((o) => !ending.test(o.label)), ...out.filter((o) => ending.test(o.label))]
}

function deref(schema: any): any {
  let s = schema
  while (s?.$ref) s = doc.components.schemas[s.$ref.split('/').pop()]
  return s
}

/** The schema without its null alternative (nullable fields), or the first branch of a union. */
function main(schema: any): any {
  const s = deref(schema) ?? {}
  const branches = s.anyOf ?? s.oneOf
  if (branches) {
    const nonNull = branches.map(deref).filter((b: any) => b.type !== 'null')
    // A union of literals (`anyOf` of single enums) stays a union: sample() takes its first value.
    return nonNull.length === 1 ? nonNull[0] : { ...nonNull[0], anyOfBranches: nonNull }
  }
  return s
}

function typeOf(schema: any): string | undefined {
  const s = main(schema)
  const type = Array.isArray(s.type) ? s.type.find((x: string) => x !== 'null') : s.type
  if (type) return type
  if (s.properties) return 'object'
  if (s.enum) return typeof s.enum[0]
  return undefined
}

/** Values for fields whose format a pattern or a lookup decides; ids come from the seeded objects. */
const KNOWN: Record<string, () => unknown> = {
  currency: () => 'USD',
  currencies: () => ['USD'],
  country: () => 'USA',
  nationality: () => 'GBR',
  countries: () => ['USA'],
  phone_number: () => '+15555550100',
  embossed_name: () => 'ADA LOVELACE',
  email: () => `bad.input.${Math.random().toString(36).slice(2)}@example.com`,
  url: () => 'https://hooks.example.com/bad-input',
  mcc: () => '5942',
  reference: () => `bi-${Math.random().toString(36).slice(2)}`,
  client_transaction_id: () => `bi-${Math.random().toString(36).slice(2)}`,
  enabled_events: () => ['*'],
  since: () => '2020-01-01T00:00:00Z',
  ip_allowlist: () => ['203.0.113.0/24'],
}

/** A valid-looking sample of a schema: required properties only, ids of the seeded objects. */
function sample(schema: any, name = ''): unknown {
  if (KNOWN[name]) return KNOWN[name]()
  if (name.endsWith('_id') && ids[name]) return ids[name]
  const s = main(schema)
  if ('const' in s) return s.const
  if (s.enum) return s.enum[0]
  if (s.examples?.[0] !== undefined) return s.examples[0]
  if (s.example !== undefined) return s.example
  if (s.default !== undefined) return s.default
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {}
      for (const key of s.required ?? []) out[key] = sample(s.properties?.[key] ?? {}, key)
      return out
    }
    case 'array':
      return Array.from({ length: Math.max(1, s.minItems ?? 0) }, () => sample(s.items ?? {}, name))
    case 'integer':
    case 'number':
      return Math.max(s.minimum ?? 1, 1)
    case 'boolean':
      return false
    case 'string':
      if (s.format === 'date') return '2024-01-01'
      if (s.format === 'date-time') return '2024-01-01T00:00:00Z'
      if (s.format === 'email') return KNOWN.email()
      if (s.format === 'uri') return 'https://example.com/x'
      if (s.format === 'country') return 'USA'
      return 'a'.repeat(Math.max(1, s.minLength ?? 1))
    default:
      return 'a'
  }
}

/** Bodies the sample cannot guess (a real key to register, fields that go together). */
const BASE_BODIES: Record<
  string,
  () => Promise<Record<string, unknown>> | Record<string, unknown>
> = {
  'POST /operator/v1/clients': async () => ({
    organization_id: tenant.organizationId,
    environment: 'sandbox',
    label: 'bad input',
    jwks: { keys: [(await newKeyPair('ES256', 'bi')).publicJwk] },
  }),
  'PATCH /operator/v1/clients/{id}': () => ({ label: 'bad input' }),
  'POST /v1/cards/{card_id}/details': () => ({ public_key: 'not a key' }),
}

/**
 * Operations that take an object only once (one open dispute per transaction): each bad body gets a fresh one, so
 * the bad value reaches the write instead of the refusal of a second dispute.
 */
const FRESH: Record<string, () => Promise<Record<string, unknown>>> = {
  'POST /v1/disputes': async () => {
    const merchant = { name: 'Bad Input Books', mcc: '5942', city: 'Springfield', country: 'USA' }
    const auth = (
      await t.api(token, 'POST', '/v1/simulate/authorizations', {
        card_id: ids.card_id,
        amount: 100,
        currency: 'USD',
        merchant,
      })
    ).json()
    const capture = (
      await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, {})
    ).json()
    const settled = await t.api(token, 'POST', `/v1/simulate/transactions/${capture.id}/settle`)
    assert.equal(settled.statusCode, 200, settled.body)
    return { transaction_id: capture.id }
  },
}

interface Field {
  path: (string | number)[]
  schema: any
}

/**
 * The body's fields, three levels deep: properties, the properties of nested objects, the first item of arrays of
 * objects, and one key (`k`) of a free-form map (metadata, a JWK, dispute evidence given as an object).
 */
function bodyFields(schema: any, path: (string | number)[] = [], depth = 0): Field[] {
  const out: Field[] = []
  const s = main(schema)
  const freeForm = (x: any) =>
    typeOf(x) === 'object' &&
    x.additionalProperties !== false &&
    Object.keys(x.properties ?? {}).length === 0
  const valueSchema = (x: any) =>
    x.additionalProperties &&
    x.additionalProperties !== true &&
    Object.keys(x.additionalProperties).length > 0
      ? x.additionalProperties
      : { type: 'string' }
  for (const [key, child] of Object.entries<any>(s.properties ?? {})) {
    const at = [...path, key]
    out.push({ path: at, schema: child })
    if (depth >= 2) continue
    const c = main(child)
    // A union of an object with something else (dispute evidence: text or an object): the object branch too.
    const objectBranch = (c.anyOfBranches ?? [c]).map(main).find((b: any) => typeOf(b) === 'object')
    if (objectBranch && freeForm(objectBranch))
      out.push({ path: [...at, 'k'], schema: valueSchema(objectBranch) })
    else if (objectBranch) out.push(...bodyFields(objectBranch, at, depth + 1))
    else if (typeOf(c) === 'array') {
      const items = main(c.items ?? {})
      if (freeForm(items)) out.push({ path: [...at, 0, 'k'], schema: valueSchema(items) })
      else if (typeOf(items) === 'object') out.push(...bodyFields(items, [...at, 0], depth + 1))
    }
  }
  return out
}

/** Text leaves of the sample body the schema does not list (the members of a registered JWK: `jwks.keys[0].kid`). */
function sampleLeaves(value: unknown, known: Set<string>, path: (string | number)[] = []): Field[] {
  if (typeof value === 'string')
    return path.length > 0 && !known.has(paramOf(path))
      ? [{ path, schema: { type: 'string' } }]
      : []
  if (value === null || typeof value !== 'object') return []
  if (Array.isArray(value))
    return value.length > 0 ? sampleLeaves(value[0], known, [...path, 0]) : []
  return Object.entries(value).flatMap(([k, v]) => sampleLeaves(v, known, [...path, k]))
}

const clone = <T>(v: T): T => structuredClone(v)

/** The body with `value` at `path`; missing parents are sampled from their schema. */
function withValue(
  base: Record<string, unknown>,
  schema: any,
  path: (string | number)[],
  value: unknown,
): Record<string, unknown> {
  const body = clone(base)
  let node: any = body
  let nodeSchema = main(schema)
  for (let i = 0; i < path.length - 1; i++) {
    const key = path[i]
    const childSchema =
      typeof key === 'number'
        ? main(nodeSchema.items ?? {})
        : main(nodeSchema.properties?.[key] ?? {})
    if (node[key] === undefined || node[key] === null || typeof node[key] !== 'object') {
      node[key] =
        typeof path[i + 1] === 'number'
          ? [sample(childSchema.items ?? {})]
          : (sample(childSchema, String(key)) ?? {})
      if (typeof node[key] !== 'object' || node[key] === null)
        node[key] = typeof path[i + 1] === 'number' ? [{}] : {}
    }
    node = node[key]
    nodeSchema = childSchema
  }
  node[path[path.length - 1]] = value
  return body
}

/** The `param` the envelope names for a body path: `address.city`, `items[0].amount`. */
function paramOf(path: (string | number)[]): string {
  return path.reduce<string>(
    (acc, p) => (typeof p === 'number' ? `${acc}[${p}]` : acc ? `${acc}.${p}` : p),
    '',
  )
}

interface BadValue {
  name: string
  value: unknown
  unstorable?: boolean
}

/** The bad values for a field of this schema: the text PostgreSQL cannot hold, a huge string, deep nesting, every wrong type. */
function badValues(schema: any): BadValue[] {
  const type = typeOf(schema)
  const wrong: BadValue[] = [
    { name: 'null', value: null },
    ...(type !== 'string' ? [{ name: 'string', value: 'x' }] : []),
    ...(type !== 'integer' && type !== 'number' ? [{ name: 'number', value: 12345 }] : []),
    ...(type !== 'array' ? [{ name: 'array', value: [] }] : []),
    ...(type !== 'object' ? [{ name: 'object', value: {} }] : []),
    ...(type === 'integer'
      ? [
          { name: 'fraction', value: 2.5 },
          { name: 'unsafe integer', value: 2 ** 64 },
        ]
      : []),
  ]
  // In an array field the bad text goes into an item, where a list of strings keeps it.
  const text = (s: string) => (type === 'array' ? [s] : s)
  return [
    { name: 'lone high surrogate', value: text('ab\uD800cd'), unstorable: true },
    { name: 'lone low surrogate', value: text('\uDC00'), unstorable: true },
    { name: 'NUL', value: text('a\u0000b'), unstorable: true },
    { name: '100 kB string', value: text(HUGE) },
    { name: 'deeply nested', value: DEEP },
    ...wrong,
  ]
}

function envelopeProblem(res: LightMyRequestResponse, oauth: boolean): string | null {
  if (res.statusCode >= 500) return `${res.statusCode} ${res.body.slice(0, 300)}`
  if (res.statusCode < 400) return null
  let body: any
  try {
    body = res.json()
  } catch {
    return `${res.statusCode} not JSON: ${res.body.slice(0, 200)}`
  }
  if (oauth) {
    const keys = Object.keys(body ?? {})
      .sort()
      .join(',')
    if (
      keys !== 'error,error_description' ||
      typeof body.error !== 'string' ||
      typeof body.error_description !== 'string'
    )
      return `${res.statusCode} not the OAuth shape: ${res.body.slice(0, 200)}`
    return null
  }
  const e = body?.error
  const ok =
    e &&
    typeof e === 'object' &&
    ['type', 'code', 'message', 'doc_url', 'request_id'].every((k) => typeof e[k] === 'string') &&
    e.doc_url.endsWith(`/docs/errors#${e.code}`) &&
    e.request_id === res.headers['svc-request-id']
  return ok ? null : `${res.statusCode} not the error envelope: ${res.body.slice(0, 200)}`
}

/** Path and query text for a value: unpaired surrogates as the UTF-8-style bytes a client could send (invalid UTF-8). */
function urlText(value: string): string {
  let out = ''
  for (const ch of value) {
    const code = ch.charCodeAt(0)
    if (ch.length === 1 && code >= 0xd800 && code <= 0xdfff)
      out +=
        `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`.toUpperCase()
    else out += encodeURIComponent(ch)
  }
  return out
}

const URL_VALUES: BadValue[] = [
  { name: 'lone high surrogate', value: 'ab\uD800cd', unstorable: true },
  { name: 'lone low surrogate', value: '\uDC00', unstorable: true },
  { name: 'NUL', value: 'a\u0000b', unstorable: true },
  { name: '10 kB string', value: LONG_IN_URL },
  { name: 'number', value: '12345' },
  { name: 'text', value: 'not-a-value' },
  { name: 'empty', value: '' },
]

function pathFor(path: string, replace?: { name: string; text: string }): string {
  return path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    if (replace?.name === name) return replace.text
    if (name === 'id')
      return path.startsWith('/operator/v1/clients') ? ids.client_id : ids.organization_id
    return ids[name] ?? `${name.replace(/_id$/, '')}_01J00000000000000000000000`
  })
}

function headersFor(o: Operation): Record<string, string> {
  if (o.path.startsWith('/operator/')) return { authorization: `Bearer ${OPERATOR_TOKEN}` }
  if (o.path.startsWith('/v1/')) return { authorization: `Bearer ${token}` }
  return {}
}

function send(o: Operation, url: string, body?: unknown): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = headersFor(o)
  const payload = body !== undefined ? JSON.stringify(body) : undefined
  if (payload !== undefined) headers['content-type'] = 'application/json'
  return t.app.inject({
    method: o.method as never,
    url,
    headers,
    ...(payload !== undefined ? { payload } : {}),
  })
}

test('every operation of /openapi.json answers bad input without a 5xx, in the error envelope, and refuses text PostgreSQL cannot hold by name', async () => {
  const ops = operations()
  assert.ok(ops.length >= 100, `only ${ops.length} operations in /openapi.json`)
  const failures: string[] = []
  const skipped: string[] = []
  let requests = 0
  const check = (
    o: Operation,
    where: string,
    res: LightMyRequestResponse,
    expectParam?: string,
  ) => {
    requests++
    const problem = envelopeProblem(res, false)
    if (problem) failures.push(`${o.label} ${where} → ${problem}`)
    else if (expectParam !== undefined) {
      const e = res.json()?.error
      if (res.statusCode !== 400 || e?.code !== 'invalid_parameter' || e?.param !== expectParam) {
        failures.push(
          `${o.label} ${where} → ${res.statusCode} ${e?.code} param ${JSON.stringify(e?.param)}, expected 400 invalid_parameter param ${JSON.stringify(expectParam)}`,
        )
      }
    }
  }

  for (const o of ops) {
    if (o.path === '/oauth/token') {
      skipped.push(
        `${o.label}: form-encoded with the flat OAuth shape, swept by its own test below`,
      )
      continue
    }
    const bodySchema = o.op.requestBody?.content?.['application/json']?.schema
    const params: any[] = o.op.parameters ?? []
    const base = bodySchema
      ? ((await (BASE_BODIES[o.label]?.() ?? sample(bodySchema))) as Record<string, unknown>)
      : undefined
    const url = pathFor(o.path)

    // Body fields.
    if (bodySchema) {
      const fields = bodyFields(bodySchema)
      fields.push(...sampleLeaves(base, new Set(fields.map((f) => paramOf(f.path)))))
      for (const field of fields) {
        for (const bad of badValues(field.schema)) {
          const fresh = FRESH[o.label] ? await FRESH[o.label]() : {}
          const res = await send(
            o,
            url,
            withValue({ ...base!, ...fresh }, bodySchema, field.path, bad.value),
          )
          // In an array the bad text is the first item: `currencies[0]`.
          const param =
            typeOf(field.schema) === 'array' ? `${paramOf(field.path)}[0]` : paramOf(field.path)
          check(
            o,
            `body ${paramOf(field.path)} = ${bad.name}`,
            res,
            bad.unstorable ? param : undefined,
          )
        }
      }
      // A key PostgreSQL cannot hold, at the top and in a nested object.
      const keyed = { ...base, 'k\uD800': 'v' }
      check(o, 'body key with a lone surrogate', await send(o, url, keyed), 'k\\ud800')
      check(
        o,
        'body key with a lone low surrogate in a nested object',
        await send(o, url, { ...base, nested: { '\uDFFFk': 'v' } }),
        'nested.\\udfffk',
      )
      check(o, 'body key with NUL', await send(o, url, { ...base, 'k\u0000': 'v' }), 'k\\u0000')
    }

    // Query parameters: text is all a query can carry, so "wrong types" are text, repetition and emptiness.
    for (const p of params.filter((x) => x.in === 'query')) {
      for (const bad of URL_VALUES) {
        const res = await send(
          o,
          `${url}?${encodeURIComponent(p.name)}=${urlText(bad.value as string)}`,
        )
        // Escapes of surrogates are not UTF-8, so no unpaired surrogate can reach a query or a path (a bad escape is a
        // bad URL, raw text arrives as U+FFFD); they are sent anyway, and a NUL must be refused by name.
        check(o, `query ${p.name} = ${bad.name}`, res, bad.name === 'NUL' ? p.name : undefined)
      }
      check(
        o,
        `query ${p.name} repeated`,
        await send(o, `${url}?${encodeURIComponent(p.name)}=a&${encodeURIComponent(p.name)}=b`),
      )
      check(
        o,
        `query ${p.name}[x] as an object`,
        await send(o, `${url}?${encodeURIComponent(p.name)}[x]=1`),
      )
    }

    // Path parameters (the body, when there is one, is the valid sample).
    for (const p of params.filter((x) => x.in === 'path')) {
      for (const bad of URL_VALUES) {
        const res = await send(
          o,
          pathFor(o.path, { name: p.name, text: urlText(bad.value as string) }),
          base,
        )
        check(o, `path ${p.name} = ${bad.name}`, res)
      }
    }
  }
  assert.ok(requests < 6000, `${requests} requests: keep the sweep bounded`)
  assert.deepEqual(skipped, [
    'POST /oauth/token: form-encoded with the flat OAuth shape, swept by its own test below',
  ])
  assert.deepEqual(
    failures,
    [],
    `${failures.length} of ${requests} bad inputs were answered wrongly:\n${failures.join('\n')}`,
  )
})

test('the token endpoint answers bad form fields and bad assertion claims in the flat OAuth shape, never a 5xx', async () => {
  const failures: string[] = []
  const fields = ['grant_type', 'client_assertion_type', 'client_assertion', 'scope', 'client_id']
  const valid = async (claims: Record<string, unknown> = {}, kid?: string) =>
    signClientAssertion({
      clientId: tenant.clientId,
      privateJwk: tenant.privateJwk,
      audience: TOKEN_URL,
      nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
      claims,
      ...(kid !== undefined ? { kid } : {}),
    })
  const form = async (override: Record<string, string>) => {
    const base: Record<string, string> = {
      grant_type: 'client_credentials',
      client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      client_assertion: await valid(),
    }
    return Object.entries({ ...base, ...override })
      .map(([k, v]) => `${encodeURIComponent(k)}=${v}`)
      .join('&')
  }
  const post = (payload: string, contentType = 'application/x-www-form-urlencoded') =>
    t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': contentType },
      payload,
    })
  const expect = (where: string, res: LightMyRequestResponse, status?: number, error?: string) => {
    const problem = envelopeProblem(res, true)
    if (problem) failures.push(`${where} → ${problem}`)
    else if (status !== undefined && (res.statusCode !== status || res.json().error !== error))
      failures.push(`${where} → ${res.statusCode} ${res.body}, expected ${status} ${error}`)
  }

  for (const field of fields) {
    for (const bad of URL_VALUES)
      expect(
        `form ${field} = ${bad.name}`,
        await post(await form({ [field]: urlText(bad.value as string) })),
      )
    expect(`form ${field} = 100 kB string`, await post(await form({ [field]: HUGE })))
    expect(`form ${field} repeated`, await post(`${await form({})}&${field}=x`))
  }
  expect(
    'a JSON body',
    await post(
      JSON.stringify({ grant_type: 'client_credentials', '\uD800': 1 }),
      'application/json',
    ),
    400,
    'invalid_request',
  )
  // Inside the signed assertion the claims are JSON: there an unpaired surrogate survives decoding.
  for (const [name, value] of [
    ['lone high surrogate', 'ab\uD800cd'],
    ['lone low surrogate', '\uDC00'],
    ['NUL', 'a\u0000b'],
    ['100 kB string', HUGE],
  ]) {
    expect(
      `jti = ${name}`,
      await post(await form({ client_assertion: await valid({ jti: value }) })),
      400,
      'invalid_request',
    )
    expect(
      `iss and sub = ${name}`,
      await post(await form({ client_assertion: await valid({ iss: value, sub: value }) })),
      401,
      'invalid_client',
    )
    expect(
      `aud = ${name}`,
      await post(await form({ client_assertion: await valid({ aud: value }) })),
      401,
      'invalid_client',
    )
    expect(
      `kid = ${name}`,
      await post(await form({ client_assertion: await valid({}, value) })),
      401,
      'invalid_client',
    )
    expect(
      `scope = ${name}`,
      await post(
        await form({ scope: urlText(name === '100 kB string' ? value : `cards:read ${value}`) }),
      ),
    )
  }
  for (const [name, value] of [
    ['number', 12345],
    ['null', null],
    ['array', []],
    ['object', {}],
    ['deeply nested', DEEP],
  ] as [string, unknown][]) {
    expect(
      `jti = ${name}`,
      await post(await form({ client_assertion: await valid({ jti: value }) })),
      400,
      'invalid_request',
    )
    expect(
      `iss and sub = ${name}`,
      await post(await form({ client_assertion: await valid({ iss: value, sub: value }) })),
      401,
      'invalid_client',
    )
    expect(
      `exp = ${name}`,
      await post(await form({ client_assertion: await valid({ exp: value }) })),
    )
  }
  assert.deepEqual(failures, [])
})

test('the hosted eSIM pages (HTML, not in /openapi.json) answer bad paths and form fields without a 5xx', async () => {
  const link = (
    await t.api(token, 'POST', '/v1/esim/h5_links', {
      cardholder_id: ids.cardholder_id,
      allow_purchases: true,
    })
  ).json()
  const base = new URL(link.url).pathname
  const page = await t.app.inject({ method: 'GET', url: base })
  assert.equal(page.statusCode, 200, page.body.slice(0, 300))
  const cookie = String(page.headers['set-cookie']).split(';')[0]
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1]
  assert.ok(csrf, 'the page carries a purchase form')
  const failures: string[] = []
  const expect = (where: string, res: LightMyRequestResponse) => {
    if (res.statusCode >= 500) failures.push(`${where} → ${res.statusCode}`)
  }
  const nonce = () => Math.random().toString(36).slice(2).padEnd(20, 'n')
  const form = (fields: Record<string, string>) =>
    Object.entries({ csrf_token: encodeURIComponent(csrf!), nonce: nonce(), ...fields })
      .map(([k, v]) => `${k}=${v}`)
      .join('&')
  const post = (url: string, payload: string) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      payload,
    })
  for (const bad of URL_VALUES) {
    const text = urlText(bad.value as string)
    expect(
      `GET /h5/{token} token = ${bad.name}`,
      await t.app.inject({ method: 'GET', url: `/h5/${text}` }),
    )
    expect(
      `GET /h5/{token}?country = ${bad.name}`,
      await t.app.inject({
        method: 'GET',
        url: `${base}?country=${text}&notice=${text}`,
        headers: { cookie },
      }),
    )
    expect(
      `POST /h5/{token}/orders package_id = ${bad.name}`,
      await post(`${base}/orders`, form({ package_id: text })),
    )
    expect(
      `POST /h5/{token}/orders nonce = ${bad.name}`,
      await post(`${base}/orders`, form({ package_id: ids.package_id, nonce: text })),
    )
    expect(
      `POST /h5/{token}/orders csrf_token = ${bad.name}`,
      await post(`${base}/orders`, form({ package_id: ids.package_id, csrf_token: text })),
    )
    expect(
      `POST /h5/{token}/esims/{esim_id}/top_ups esim_id = ${bad.name}`,
      await post(`${base}/esims/${text}/top_ups`, form({ top_up_id: ids.top_up_id ?? 'x' })),
    )
    expect(
      `POST /h5/{token}/esims/{esim_id}/top_ups top_up_id = ${bad.name}`,
      await post(`${base}/esims/${ids.esim_id}/top_ups`, form({ top_up_id: text })),
    )
  }
  expect(
    'POST /h5/{token}/orders with a JSON body',
    await t.app.inject({
      method: 'POST',
      url: `${base}/orders`,
      headers: { cookie, 'content-type': 'application/json' },
      payload: '{"package_id":"\\ud800"}',
    }),
  )
  // The traveller page's card forms.
  const cardsLink = (
    await t.api(token, 'POST', '/v1/esim/h5_links', {
      cardholder_id: ids.cardholder_id,
      sections: ['cards'],
    })
  ).json()
  const cardsBase = new URL(cardsLink.url).pathname
  const cardsPage = await t.app.inject({ method: 'GET', url: cardsBase, headers: { cookie } })
  const cardsCsrf = /name="csrf_token" value="([^"]+)"/.exec(cardsPage.body)?.[1] ?? ''
  for (const bad of URL_VALUES) {
    const text = urlText(bad.value as string)
    for (const op of ['freeze', 'unfreeze', 'reveal']) {
      expect(
        `POST /h5/{token}/cards/{card_id}/${op} card_id = ${bad.name}`,
        await post(
          `${cardsBase}/cards/${text}/${op}`,
          form({ csrf_token: encodeURIComponent(cardsCsrf) }),
        ),
      )
      expect(
        `POST /h5/{token}/cards/{card_id}/${op} csrf_token = ${bad.name}`,
        await post(`${cardsBase}/cards/${ids.card_id}/${op}`, form({ csrf_token: text })),
      )
    }
  }
  assert.deepEqual(failures, [])
})
