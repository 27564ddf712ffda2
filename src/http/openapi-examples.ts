import { isCountryCode } from '../lib/countries.js'
import type { IdPrefix } from '../lib/ids.js'

/**
 * Request examples for the OpenAPI document, written once here rather than beside each route: an operation whose
 * body schema carries its own `examples` keeps them; any other body (and every path and query parameter a code sample
 * needs) gets a value built from its schema: `const`, a convention of the field's name when the schema accepts it
 * (`amount` in minor units, `currency` `USD`, `country` `USA`, `mcc`, emails, addresses), `default`, the first `enum`
 * value, then the type and format. A field `<thing>_id` gets an id with `<thing>`'s prefix (`ID_FIELDS`), the one the
 * document's own response examples use where there is one, so a request names the object its answer shows.
 */

type Schema = Record<string, any>

/** The body of a synthesized id: 26 Crockford base32 characters, as `newId` makes them. */
const ID_BODY = '01JD3R5M7N8P9Q2R3S4T5V6W7X'

/**
 * The prefix of the id a field or path parameter `<name>` holds. A new `…_id` field whose prefix is not here gets a
 * made-up one, and test/platform/openapi-examples.test.ts fails naming it: add the field here.
 */
export const ID_FIELDS: Readonly<Record<string, IdPrefix>> = {
  account_id: 'acct',
  attempt_id: 'aea',
  authentication_id: 'tdsa',
  authorization_endpoint_id: 'aep',
  authorization_id: 'auth',
  authorization_rule_id: 'arl',
  backtest_id: 'arb',
  card_id: 'card',
  cardholder_id: 'chd',
  client_id: 'oc',
  clock_id: 'clk',
  delivery_id: 'whd',
  dispute_id: 'dsp',
  entry_id: 'le',
  esim_id: 'esim',
  event_id: 'evt',
  h5_link_id: 'h5',
  hold_id: 'hold',
  invitation_id: 'inv',
  kyc_id: 'kyc',
  last_event_id: 'evt',
  ledger_entry_id: 'le',
  network_token_id: 'ntok',
  oauth_client_id: 'oc',
  order_id: 'esord',
  organization_id: 'org',
  package_id: 'pkg',
  pay_from_account_id: 'acct',
  pin_key_id: 'pink',
  program_id: 'prog',
  replacement_for: 'card',
  report_id: 'rpt',
  request_id: 'req',
  top_up_id: 'topup',
  transaction_id: 'txn',
  user_id: 'usr',
  webhook_endpoint_id: 'whe',
}

/** Values by field name, used when the field's schema accepts them (else the type decides). */
const BY_NAME: Readonly<Record<string, unknown>> = {
  email: 'maria.garcia@example.com',
  first_name: 'Maria',
  last_name: 'Garcia',
  legal_name: 'Maria Elena Garcia',
  embossed_name: 'MARIA GARCIA',
  phone_number: '+12125550123',
  line1: '350 Fifth Avenue',
  line2: 'Floor 12',
  city: 'New York',
  state: 'NY',
  postal_code: '10118',
  country: 'USA',
  nationality: 'USA',
  country_of_birth: 'USA',
  currency: 'USD',
  base: 'USD',
  quote: 'EUR',
  mcc: '5814',
  url: 'https://example.com/svc/webhooks',
  description: 'Adjustment for order 1042',
  label: 'Payments backend',
  reference: 'CUST-1042',
  provider: 'acme-kyc',
  provider_reference: 'CHK-20261120-0042',
  note: 'Confirmed with the cardholder by phone',
  reason: 'Returned by the customer',
  number: 'X12345678',
  cvc: '123',
  client_transaction_id: 'ledger-2026-11-20-0042',
  since: '2026-11-20T00:00:00Z',
  verified_at: '2026-11-20T09:30:00Z',
  expires_at: '2027-11-20T09:30:00Z',
  document_expires_on: '2031-05-31',
  file_name: 'passport.jpg',
  content: '/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAA==',
  encrypted_pin: 'Yp3Hq0x7V2l8c9K1mN4rT6uW8yZ0bD2fH4jL6nP8sU0wX2aC4eG6iK8mO0qS2u==',
  client_assertion: [
    'eyJhbGciOiJFUzI1NiIsImtpZCI6ImtleS0xIiwidHlwIjoiSldUIn0',
    'eyJpc3MiOiJvY18wMUpEM1I1TTdOOFA5UTJSM1M0VDVWNlc3WCJ9',
    'c2lnbmF0dXJl',
  ].join('.'),
  scope: 'cardholders:read cards:read',
  bin: '49990000',
  iccid: '8944500102198304826',
  smdp_address: 'smdp.example.com',
  matching_id: 'QR-G-5C-KR-1PRQ9ZD',
  rate: '1.0825',
  types: 'card.*,authorization.created',
  amount: 1250,
  limit_amount: 50000,
  limit_count: 20,
  price: 1500,
  fx_markup_bps: 200,
  data_mb: 10240,
  data_used_mb: 512,
  validity_days: 30,
  count: 3,
  latency_ms: 250,
  timeout_ms: 1500,
  seconds: 86400,
  exp_month: 11,
  exp_year: 2029,
  limit: 10,
  metadata: { customer_ref: 'CUST-1042' },
  currencies: ['USD', 'EUR'],
  countries: ['USA', 'CAN'],
  allowed_countries: ['USA', 'CAN'],
  blocked_countries: ['PRK'],
  include_countries: ['USA'],
  exclude_countries: ['PRK'],
  allowed_mccs: ['5814', '5812'],
  blocked_mccs: ['7995'],
  include_mccs: ['5814'],
  exclude_mccs: ['7995'],
  merchant_currencies: ['USD'],
  spending_limits: [{ amount: 50000, interval: 'daily' }],
  scopes: ['cards:read', 'cards:write'],
  enabled_events: ['card.*', 'authorization.created'],
  ip_allowlist: ['203.0.113.0/24'],
  form_factors: ['virtual', 'physical'],
  jwks: {
    keys: [
      {
        kty: 'EC',
        crv: 'P-256',
        x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
        y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
        kid: 'key-1',
        alg: 'ES256',
        use: 'sig',
      },
    ],
  },
}

const EUROPE_PACKAGE = {
  name: 'Europe 10 GB',
  countries: ['FRA', 'DEU', 'ESP', 'ITA', 'PRT'],
  region: 'regional',
}

/** A webhook endpoint's own words about itself. */
const endpointDescription = (e: any) => ({
  ...e,
  description: 'Card and authorization events for the ledger service',
})

/**
 * Request examples the conventions cannot make realistic, by operation: a function of the synthesized example
 * (return a changed copy). Every result is checked against its schema by test/platform/openapi-examples.test.ts.
 */
const REQUEST_OVERRIDES: Readonly<Record<string, (example: any) => unknown>> = {
  // The form the token endpoint reads; `client_id` is optional and only repeats the assertion's `iss`.
  'POST /oauth/token': ({ client_id: _clientId, ...form }) => form,
  'POST /v1/webhook_endpoints': endpointDescription,
  'PATCH /v1/webhook_endpoints/{webhook_endpoint_id}': endpointDescription,
  'POST /operator/v1/organizations': (e) => ({ ...e, name: 'Acme Ltd' }),
  'POST /operator/v1/programs': (e) => ({ ...e, name: 'Acme debit' }),
  'PATCH /operator/v1/programs/{id}': (e) => ({ ...e, name: 'Acme debit' }),
  'POST /operator/v1/users/invitations': (e) => ({
    ...e,
    email: 'ada@example.com',
    role: 'developer',
  }),
  'POST /operator/v1/esim/packages': (e) => ({
    ...e,
    ...EUROPE_PACKAGE,
    top_ups: [
      { name: '5 GB add-on', data_mb: 5120, validity_days: 0, price: 900, status: 'on_sale' },
    ],
  }),
  'PATCH /operator/v1/esim/packages/{package_id}': (e) => ({ ...e, ...EUROPE_PACKAGE }),
  'PATCH /operator/v1/esim/top_ups/{top_up_id}': (e) => ({ ...e, name: '5 GB add-on' }),
  // Auto top-up: 1 GB from the traveller's account each time usage crosses 90 %, at most 3 a month.
  'PATCH /v1/esim/esims/{esim_id}': (e) => ({
    ...e,
    auto_top_up: {
      top_up_id: 'topup_01KDVDNA23PK721HE8A7GS31PE',
      account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
      trigger: 'threshold',
      threshold_pct: 90,
      max_per_month: 3,
    },
  }),
  // A clock starts at a time of the test's choosing; an advance takes `to` or `by`, never both.
  'POST /v1/simulate/clocks': () => ({
    frozen_time: '2026-11-01T00:00:00Z',
    name: 'hold expiry test',
  }),
  'POST /v1/simulate/clocks/{clock_id}/advance': () => ({ by: 'P8D' }),
}

/** Values by the end of a field's name, for the fields `BY_NAME` does not list (`merchant_amount`, `home_currency`). */
const BY_SUFFIX: readonly [string, unknown][] = [
  ['_amount', 1250],
  ['_currency', 'USD'],
  ['_currencies', ['USD', 'EUR']],
  ['_country', 'USA'],
  ['_countries', ['USA', 'CAN']],
  ['_mcc', '5814'],
  ['_email', 'maria.garcia@example.com'],
  ['_url', 'https://example.com/svc/webhooks'],
  ['_reference', 'CUST-1042'],
]

/** The convention for a field `name` inside an object `parent`, if any. */
function byName(name: string, parent: string): unknown {
  if (name === 'name') return NAME_IN[parent] ?? NAME_IN['']
  if (name in BY_NAME) return BY_NAME[name]
  return BY_SUFFIX.find(([suffix]) => name.endsWith(suffix))?.[1]
}

/** `name` as a field of these objects. */
const NAME_IN: Readonly<Record<string, string>> = {
  merchant: 'Blue Bottle Coffee',
  delivery_address: 'Maria Garcia',
  top_up: '5 GB add-on',
  '': 'Acme Ltd',
}

/** Strings a pattern may want when no convention fits it. */
const PATTERN_CANDIDATES = ['USD', '5814', '123', '49990000', '+12125550123', '1.0825', 'ABC123']

export interface ExampleContext {
  components: Record<string, Schema>
  /** Ids the document's own examples show, by prefix. */
  ids: Map<string, string>
}

const isObject = (v: unknown): v is Schema =>
  typeof v === 'object' && v !== null && !Array.isArray(v)

export function deref(schema: unknown, ctx: ExampleContext): Schema {
  let s = schema
  for (let i = 0; i < 10 && isObject(s) && typeof s.$ref === 'string'; i++)
    s = ctx.components[s.$ref.split('/').pop() as string]
  return isObject(s) ? s : {}
}

/** The `id` of every example of every component, first seen per prefix: `card_01JD3Q…` for `card`. */
export function documentIds(components: Record<string, Schema>): Map<string, string> {
  const ids = new Map<string, string>()
  for (const schema of Object.values(components)) {
    for (const example of Array.isArray(schema?.examples) ? schema.examples : []) {
      const id = isObject(example) ? example.id : undefined
      const prefix =
        typeof id === 'string' ? /^([a-z0-9]+)_[0-9A-HJKMNP-TV-Z]{26}$/.exec(id)?.[1] : undefined
      if (prefix && !ids.has(prefix)) ids.set(prefix, id as string)
    }
  }
  return ids
}

/** An id for a field `<name>` (or `<name>s` item): its prefix's id in the document, else a made-up one. */
export function idFor(name: string, ctx: ExampleContext): string | undefined {
  const field = name.endsWith('_ids') ? name.slice(0, -1) : name
  if (!field.endsWith('_id') && !(field in ID_FIELDS)) return undefined
  const prefix = ID_FIELDS[field] ?? field.slice(0, -3).replace(/_/g, '')
  return ctx.ids.get(prefix) ?? `${prefix}_${ID_BODY}`
}

function typeOf(s: Schema): string | undefined {
  const type = Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type
  if (type) return type
  if (s.properties || s.additionalProperties) return 'object'
  if (s.items) return 'array'
  if (Array.isArray(s.enum)) return typeof s.enum[0]
  return undefined
}

const FORMATS: Record<string, (v: string) => boolean> = {
  'date-time': (v) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(v),
  date: (v) => /^\d{4}-\d{2}-\d{2}$/.test(v),
  email: (v) => /^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v),
  uri: (v) => /^https?:\/\/\S+$/.test(v),
  country: isCountryCode,
}

/** Whether `value` satisfies the schema's own checks (the keywords a convention could break). */
function fits(value: unknown, s: Schema, ctx: ExampleContext): boolean {
  if (value === undefined) return false
  if (Array.isArray(s.enum) && !s.enum.includes(value)) return false
  if ('const' in s && s.const !== value) return false
  const type = typeOf(s)
  if (typeof value === 'string') {
    if (type && type !== 'string') return false
    const length = [...value].length
    if (length < (s.minLength ?? 0) || length > (s.maxLength ?? Number.POSITIVE_INFINITY))
      return false
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return false
    return !(s.format in FORMATS) || FORMATS[s.format](value)
  }
  if (typeof value === 'number') {
    if (type !== 'integer' && type !== 'number') return false
    if (type === 'integer' && !Number.isInteger(value)) return false
    return value >= (s.minimum ?? value) && value <= (s.maximum ?? value)
  }
  if (Array.isArray(value)) {
    if (type !== 'array') return false
    if (value.length < (s.minItems ?? 0) || value.length > (s.maxItems ?? value.length))
      return false
    return value.every((v) => fits(v, deref(s.items ?? {}, ctx), ctx))
  }
  if (isObject(value)) return type === 'object'
  return typeof value === 'boolean' ? type === 'boolean' : false
}

/** The first branch of a union that is not `null`. */
function mainBranch(s: Schema, ctx: ExampleContext): Schema | undefined {
  const branches = s.anyOf ?? s.oneOf
  if (!Array.isArray(branches)) return undefined
  return branches.map((b: unknown) => deref(b, ctx)).find((b: Schema) => typeOf(b) !== 'null')
}

function humanized(name: string, s: Schema): string {
  const words = name ? name.replace(/_/g, ' ') : 'text'
  const min = s.minLength ?? 1
  return (words.length >= min ? words : words.padEnd(min, 'x')).slice(0, s.maxLength ?? undefined)
}

function stringExample(name: string, s: Schema, ctx: ExampleContext): string {
  const id = idFor(name, ctx)
  if (id !== undefined && fits(id, s, ctx)) return id
  const byFormat: Record<string, string> = {
    'date-time': '2026-11-20T09:30:00Z',
    date: '2026-11-20',
    email: 'maria.garcia@example.com',
    uri: 'https://example.com/svc/webhooks',
    country: 'USA',
    byte: 'U3ZjIGV4YW1wbGU=',
  }
  if (s.format in byFormat) return byFormat[s.format]
  if (typeof s.pattern === 'string') {
    const candidate = PATTERN_CANDIDATES.find((c) => fits(c, s, ctx))
    if (candidate !== undefined) return candidate
  }
  return humanized(name, s)
}

/**
 * An example of `schema` for a field called `name` inside an object called `parent` (both '' at the top). Objects
 * show every property they list, arrays one item (or `minItems`).
 */
export function exampleOf(
  schema: unknown,
  ctx: ExampleContext,
  name = '',
  parent = '',
  depth = 0,
): unknown {
  const s = deref(schema, ctx)
  if (Array.isArray(s.examples) && s.examples.length > 0) return structuredClone(s.examples[0])
  if (s.example !== undefined) return structuredClone(s.example)
  if ('const' in s) return s.const
  const named = byName(name, parent)
  if (fits(named, s, ctx)) return structuredClone(named)
  if (s.default !== undefined) return s.default
  if (Array.isArray(s.enum) && s.enum.length > 0) return s.enum.find((v: unknown) => v !== null)
  const branch = mainBranch(s, ctx)
  if (branch) return exampleOf(branch, ctx, name, parent, depth)
  switch (typeOf(s)) {
    case 'object': {
      const out: Record<string, unknown> = {}
      if (depth > 6) return out
      for (const [key, value] of Object.entries<unknown>(s.properties ?? {}))
        out[key] = exampleOf(value, ctx, key, name, depth + 1)
      return out
    }
    case 'array': {
      const item = name.endsWith('s') ? name.slice(0, -1) : name
      const count = Math.max(1, s.minItems ?? 0)
      return Array.from({ length: count }, () =>
        exampleOf(s.items ?? {}, ctx, item, parent, depth + 1),
      )
    }
    case 'integer':
    case 'number': {
      const low = Math.max(
        s.minimum ?? 1,
        s.exclusiveMinimum === undefined ? -Infinity : s.exclusiveMinimum + 1,
      )
      return Math.min(Math.max(1, low), s.maximum ?? Number.POSITIVE_INFINITY)
    }
    case 'boolean':
      return true
    case 'null':
      return null
    default:
      return stringExample(name, s, ctx)
  }
}

/**
 * Gives every request body of the operation an example unless it has one (on the media object, or on its schema,
 * which renderers show already):
 * the schema's synthesized example, then the operation's override.
 */
export function addRequestExample(key: string, op: Record<string, any>, ctx: ExampleContext): void {
  for (const media of Object.values<Record<string, any>>(op.requestBody?.content ?? {})) {
    if (media.example !== undefined || media.examples !== undefined) continue
    if (Array.isArray(deref(media.schema, ctx).examples)) continue
    const synthesized = exampleOf(media.schema ?? {}, ctx)
    const override = REQUEST_OVERRIDES[key]
    media.example = override ? override(synthesized) : synthesized
  }
}

/** The example value of a path or query parameter: `{id}` takes the kind its path segment names (`/programs/{id}`). */
export function parameterExample(
  param: { name: string; schema?: unknown },
  path: string,
  ctx: ExampleContext,
): unknown {
  if (param.name === 'id') {
    const segment = /\/([a-z_]+)\/\{id\}/.exec(path)?.[1] ?? ''
    const id = idFor(`${segment.replace(/s$/, '')}_id`, ctx)
    if (id) return id
  }
  return exampleOf(param.schema ?? { type: 'string' }, ctx, param.name)
}
