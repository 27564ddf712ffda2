import assert from 'node:assert/strict'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { newId } from '../../src/lib/ids.js'
import { MODULES, type ServiceModule } from '../../src/modules/index.js'
import { newKeyPair, type TestApp, type TestClient } from '../helpers/app.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'

/** One operation as the app registered it (HEAD twins of GET routes are left out: same config, no body to read). */
export interface RouteInfo {
  method: string
  url: string
  scope?: string
  simulator: boolean
  capability?: string
  hasBody: boolean
}

/**
 * Records every route the modules register. onRoute hooks only see routes added after them, so a
 * `beforeReady` hook would see none: the recorder is mounted as the first module instead
 * (`startTestApp({ modules: recorder.modules })`); `routes` is filled once the app is built.
 */
export function recordRoutes(): { routes: RouteInfo[]; modules: ServiceModule[] } {
  const routes: RouteInfo[] = []
  const recorder: ServiceModule = {
    name: 'route-recorder',
    routes: (app) => {
      app.addHook('onRoute', (r) => {
        for (const method of [r.method].flat()) {
          if (method === 'HEAD' || !r.url.startsWith('/v1')) continue
          const config = (r.config ?? {}) as {
            scope?: string
            simulator?: boolean
            capability?: { name: string }
          }
          routes.push({
            method,
            url: r.url,
            scope: config.scope,
            simulator: config.simulator === true,
            capability: config.capability?.name,
            hasBody: Boolean(r.schema?.body),
          })
        }
      })
    },
  }
  return { routes, modules: [recorder, ...MODULES] }
}

export const label = (r: { method: string; url: string }): string => `${r.method} ${r.url}`

/**
 * `/v1` operations any valid token may call, with the reason. Every other `/v1` route must declare a
 * scope; a new route without one fails the test until it is added here with a justification.
 */
export const NO_SCOPE_ALLOWLIST: Record<string, string> = {
  'GET /v1/programs': 'interface.md: "GET /v1/programs needs only a valid token, no scope"',
  // decisions.md (Sign-in, streams and scopes, hardened): each event is read with the scope of its object, so these
  // routes need none of their own; test/security/event-scopes.test.ts holds what each token reads through them.
  'GET /v1/events': 'no route scope: each event is read with the scope of its object',
  'GET /v1/events/:event_id': 'no route scope: each event is read with the scope of its object',
  'GET /v1/events/stream':
    'no route scope: the stream carries the events the token reads, each with the scope of its object',
  'POST /v1/simulate/processor_faults':
    "sandbox-only harness that shapes the caller's own simulated processor across accounts, cards and PINs; no object kind owns it",
}

const byMethod = (method: string, read: string, write: string): string =>
  method === 'GET' ? read : write

/**
 * The scope each operation needs, from the interface's scope table and decisions.md; simulator routes
 * need the write scope of the kind they act on. `undefined` means no rule covers the route (a failure).
 */
export function expectedScope(method: string, url: string): string | null | undefined {
  if (NO_SCOPE_ALLOWLIST[`${method} ${url}`]) return null
  const p = url.slice('/v1/'.length)
  if (/^webhook_endpoints(\/|$)/.test(p)) return 'webhooks:write'
  // decisions.md (Authorization decided by the integrator): the authorization endpoint is managed like webhook endpoints.
  if (/^authorization_endpoint(\/|$)/.test(p)) return 'webhooks:write'
  // A replay sends deliveries, and an event's deliveries are the endpoints' delivery log, so both are managed like the
  // endpoints (and a replay also needs the scope of the event's object, like reading it).
  if (/^events\/:[a-z_]+\/(replay|deliveries)$/.test(p)) return 'webhooks:write'
  if (/^oauth_clients(\/|$)/.test(p)) return 'clients:write'
  if (/^(cardholders|accounts)\/:[a-z_]+\/cards$/.test(p))
    return byMethod(method, 'cards:read', 'cards:write')
  if (/^cardholders(\/|$)/.test(p)) return byMethod(method, 'cardholders:read', 'cardholders:write')
  if (/^accounts(\/|$)/.test(p)) return byMethod(method, 'accounts:read', 'accounts:write')
  if (/^cards\/:[a-z_]+\/(pin-key|pin|pin\/verify|details|reveal_sessions)$/.test(p))
    return 'cards:secrets'
  if (/^(cards|network_tokens|authorization_rules)(\/|$)/.test(p))
    return byMethod(method, 'cards:read', 'cards:write')
  if (/^(authorizations|transactions|disputes)(\/|$)/.test(p))
    return byMethod(method, 'transactions:read', 'transactions:write')
  if (/^reports(\/|$)/.test(p)) return 'transactions:read'
  // decisions.md (Spending in any currency) names no scope for the rate table: a rate is what authorizations convert
  // at, so it is read (and pinned, below) with their scopes.
  if (/^fx_rates$/.test(p)) return 'transactions:read'
  if (/^authentications(\/|$)/.test(p))
    return byMethod(method, 'authentications:read', 'authentications:write')
  if (/^esim\//.test(p)) return byMethod(method, 'esim:read', 'esim:write')
  // Simulators: the authentication simulator plays the network for a card (authentications:* is release-gated).
  if (/^simulate\/(cards|network_tokens|authentications)(\/|$)/.test(p)) return 'cards:write'
  if (/^simulate\/(authorizations|transactions|refunds|disputes|fx_rates)(\/|$)/.test(p))
    return 'transactions:write'
  if (/^simulate\/esim\//.test(p)) return 'esim:write'
  // Sandbox clocks set the time of the cardholders that join them: read and managed with the cardholders' scopes.
  if (/^simulate\/clocks(\/|$)/.test(p))
    return byMethod(method, 'cardholders:read', 'cardholders:write')
  return undefined
}

/** Object kinds that live in an organization and environment, with their id prefix and not-found code. */
export const KINDS = {
  cardholder: { prefix: 'chd', notFound: 'cardholder_not_found' },
  account: { prefix: 'acct', notFound: 'account_not_found' },
  card: { prefix: 'card', notFound: 'card_not_found' },
  event: { prefix: 'evt', notFound: 'event_not_found' },
  webhook_endpoint: { prefix: 'whe', notFound: 'webhook_endpoint_not_found' },
  esim_order: { prefix: 'esord', notFound: 'esim_order_not_found' },
  esim: { prefix: 'esim', notFound: 'esim_not_found' },
  authorization: { prefix: 'auth', notFound: 'authorization_not_found' },
  transaction: { prefix: 'txn', notFound: 'transaction_not_found' },
  dispute: { prefix: 'dsp', notFound: 'dispute_not_found' },
  network_token: { prefix: 'ntok', notFound: 'token_not_found' },
  authorization_rule: { prefix: 'arl', notFound: 'authorization_rule_not_found' },
  authorization_rule_backtest: {
    prefix: 'arb',
    notFound: 'authorization_rule_backtest_not_found',
  },
  authentication: { prefix: 'tdsa', notFound: 'authentication_not_found' },
  report: { prefix: 'rpt', notFound: 'report_not_found' },
  oauth_client: { prefix: 'oc', notFound: 'client_not_found' },
  sandbox_clock: { prefix: 'clk', notFound: 'sandbox_clock_not_found' },
  /** The platform's eSIM catalogue: shared by every organization, so no tenancy answer applies. */
  package: { prefix: 'pkg', notFound: 'esim_package_not_found', shared: true },
} as const satisfies Record<string, { prefix: string; notFound: string; shared?: boolean }>

export type Kind = keyof typeof KINDS

/** Catalogue objects belong to no organization: cross-tenant and cross-environment answers do not apply. */
export const isShared = (kind: Kind | null): boolean => kind !== null && 'shared' in KINDS[kind]

const PARAM_KINDS: Record<string, Kind> = Object.fromEntries(
  Object.keys(KINDS).map((k) => [`${k}_id`, k as Kind]),
)
PARAM_KINDS.order_id = 'esim_order'
PARAM_KINDS.backtest_id = 'authorization_rule_backtest'
PARAM_KINDS.clock_id = 'sandbox_clock'

const COLLECTION_KINDS: Record<string, Kind> = {
  cardholders: 'cardholder',
  accounts: 'account',
  cards: 'card',
  events: 'event',
  webhook_endpoints: 'webhook_endpoint',
  orders: 'esim_order',
  esims: 'esim',
  authorizations: 'authorization',
  transactions: 'transaction',
  disputes: 'dispute',
  network_tokens: 'network_token',
  authorization_rules: 'authorization_rule',
  authentications: 'authentication',
  reports: 'report',
  packages: 'package',
  oauth_clients: 'oauth_client',
  clocks: 'sandbox_clock',
}

/**
 * Path parameters that are values, not object ids (a currency pair of the rate table), with the value the sweep sends:
 * no organization owns them, so the tenancy answers do not apply and `pathParams` leaves them out.
 */
export const VALUE_PARAMS: Record<string, string> = { base: 'EUR', quote: 'USD' }

/** Path parameters of a route with the kind each names (`:id` takes the kind of the collection before it); null: unmapped. */
export function pathParams(url: string): { name: string; kind: Kind | null }[] {
  const segments = url.split('/')
  return segments.flatMap((s, i) => {
    if (!s.startsWith(':') || Object.hasOwn(VALUE_PARAMS, s.slice(1))) return []
    const name = s.slice(1)
    return [
      {
        name,
        kind:
          PARAM_KINDS[name] ?? (name === 'id' ? (COLLECTION_KINDS[segments[i - 1]] ?? null) : null),
      },
    ]
  })
}

export const missingId = (kind: Kind): string => newId(KINDS[kind].prefix as never)

/** Objects of one organization and environment, by kind; `basic` ones live on the sim_basic program. */
export type ObjectSet = Partial<Record<Kind, { id: string; basic?: boolean }[]>>

/** The path with each parameter replaced by the id `pick` chooses. */
export function fillPath(url: string, pick: (kind: Kind, name: string) => string): string {
  const params = pathParams(url)
  let out = url
  for (const [name, value] of Object.entries(VALUE_PARAMS)) out = out.replace(`:${name}`, value)
  for (const p of params) out = out.replace(`:${p.name}`, pick(p.kind as Kind, p.name))
  return out
}

const PROBE_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 })
  .publicKey.export({ type: 'spki', format: 'pem' })
  .toString()

/**
 * Bodies that pass schema validation, so the handler's lookup by id is what answers. A route with a
 * body schema and no entry here gets `{}`; the not-found check then tells which entry to add.
 */
export const BODIES: Record<string, () => unknown> = {
  'PATCH /v1/webhook_endpoints/:webhook_endpoint_id': () => ({ description: 'security probe' }),
  'PUT /v1/authorization_endpoint': () => ({ url: 'https://hooks.example.com/authorize' }),
  'POST /v1/webhook_endpoints/:webhook_endpoint_id/replay': () => ({
    since: new Date().toISOString(),
  }),
  'PATCH /v1/oauth_clients/:oauth_client_id': () => ({ label: 'security probe' }),
  'PATCH /v1/cardholders/:cardholder_id': () => ({ first_name: 'Probe' }),
  'POST /v1/cardholders/:cardholder_id/kyc': () => ({
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: '2020-01-01T00:00:00Z',
  }),
  'POST /v1/accounts/:account_id/block': () => ({ reason: 'fraud' }),
  'POST /v1/accounts/:account_id/credit': () => ({ amount: 100 }),
  'POST /v1/accounts/:account_id/debit': () => ({ amount: 100 }),
  'POST /v1/simulate/processor_faults': () => ({
    operation: 'reveal_details',
    error: 'processor_unavailable',
    count: 1,
  }),
  'PUT /v1/simulate/fx_rates/:base/:quote': () => ({ rate: '1.0825' }),
  'POST /v1/esim/esims/:esim_id/top_ups': () => ({
    top_up_id: 'topup_00000000000000000000000000',
    reference: `probe-${randomBytes(6).toString('hex')}`,
  }),
  'POST /v1/simulate/esim/packages/:package_id/status': () => ({ status: 'on_sale' }),
  'POST /v1/simulate/esim/esims/:esim_id/usage': () => ({ data_used_mb: 1 }),
  'POST /v1/simulate/esim/esims/:esim_id/location': () => ({ country: 'FRA' }),
  'POST /v1/simulate/esim/usage_reports': () => ({
    reports: [{ esim_id: 'esim_00000000000000000000000000', data_used_mb: 1 }],
  }),
  'PATCH /v1/esim/esims/:esim_id': () => ({ alert_settings: null }),
  'PUT /v1/esim/alert_settings': () => ({
    usage_thresholds_pct: [80, 100],
    validity_warning_hours: [24],
  }),
  'PATCH /v1/cards/:card_id': () => ({ metadata: { probe: '1' } }),
  'PATCH /v1/authorization_rules/:authorization_rule_id': () => ({ name: 'security probe' }),
  'POST /v1/authorization_rules/:authorization_rule_id/backtests': () => BACKTEST_WINDOW,
  'POST /v1/cards/:card_id/replace': () => ({ reason: 'damaged' }),
  'POST /v1/cards/:card_id/pin': () => ({
    pin_key_id: 'pink_00000000000000000000000000',
    encrypted_pin: 'AAAA',
  }),
  'POST /v1/cards/:card_id/pin/verify': () => ({
    pin_key_id: 'pink_00000000000000000000000000',
    encrypted_pin: 'AAAA',
  }),
  'POST /v1/cards/:card_id/details': () => ({ public_key: PROBE_KEY }),
  'POST /v1/cards/:card_id/reveal_sessions': () => ({ target_origin: 'https://app.example.com' }),
  'POST /v1/simulate/authorizations/:authorization_id/increment': () => ({ amount: 100 }),
  'POST /v1/transactions/:transaction_id/refund': () => ({ amount: 1 }),
  'POST /v1/simulate/disputes/:dispute_id/resolve': () => ({ outcome: 'won' }),
  'POST /v1/simulate/clocks/:clock_id/advance': () => ({ by: 'PT1H' }),
}

export function bodyFor(route: RouteInfo): unknown {
  const make = BODIES[label(route)]
  return make ? make() : route.hasBody ? {} : undefined
}

/** Status, and the body without its request id: what must not tell a missing object from another tenant's. */
export function answer(res: LightMyRequestResponse): { status: number; body: unknown } {
  let body: any
  try {
    body = res.json()
  } catch {
    body = res.body
  }
  if (body?.error) body = { ...body, error: { ...body.error, request_id: '<request_id>' } }
  return { status: res.statusCode, body }
}

export function errorCode(res: LightMyRequestResponse): string | undefined {
  try {
    return res.json()?.error?.code
  } catch {
    return undefined
  }
}

const MERCHANT = { name: 'Probe Books', mcc: '5942', city: 'Springfield', country: 'USA' }

/** Any report will do: the sweep needs only its id. */
const REPORT_BODY = { type: 'ledger', from: '2020-01-01', to: '2020-12-31' }

async function ok(res: Promise<LightMyRequestResponse>, status: number): Promise<any> {
  const r = await res
  assert.equal(r.statusCode, status, r.body)
  return r.json()
}

/**
 * One object of every kind in the tenant's sandbox, made through the public API and the simulator:
 * the full chain cardholder → account → card → authorization → transaction → dispute, a network token,
 * a 3-D Secure challenge, an eSIM order and its eSIM, a webhook endpoint, an event and an authorization rule; plus an account
 * and a card on sim_basic, which mounts none of account_credit, account_debit, account_status, card_pin.
 */
export async function seedSandbox(
  t: TestApp,
  tenant: TestClient,
  token: string,
): Promise<ObjectSet> {
  const api = (method: string, url: string, body?: unknown) => t.api(token, method, url, body)
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  await ok(api('POST', `/v1/accounts/${account.id}/credit`, { amount: 100_000 }), 200)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const basicHolder = await makeCardholder(t, token)
  const basicAccount = await makeAccount(t, token, tenant.programs.basic.id, basicHolder.id)
  const basicCard = await issuedCard(t, token, cardBody(basicHolder.id, basicAccount.id))
  const auth = await ok(
    api('POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 2_000,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    201,
  )
  const captured = await ok(api('POST', `/v1/simulate/authorizations/${auth.id}/capture`, {}), 201)
  const txn = await ok(api('POST', `/v1/simulate/transactions/${captured.id}/settle`), 200)
  const dispute = await ok(
    api('POST', '/v1/disputes', { transaction_id: txn.id, reason: 'not_received', amount: 500 }),
    201,
  )
  const pending = await ok(
    api('POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 1_000,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    201,
  )
  const ntok = await ok(
    api('POST', '/v1/simulate/network_tokens', { card_id: card.id, wallet: 'apple_pay' }),
    201,
  )
  const tdsa = await ok(
    api('POST', '/v1/simulate/authentications', {
      card_id: card.id,
      amount: 4_999,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    201,
  )
  await ok(api('POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 }), 200)
  const pkg = (await ok(api('GET', '/v1/esim/packages?status=on_sale&limit=100'), 200)).data.find(
    (p: any) => p.data_mb !== null,
  )
  assert.ok(pkg, 'the seeded eSIM catalogue has a package on sale')
  const order = await ok(
    api('POST', '/v1/esim/orders', {
      package_id: pkg.id,
      reference: `sec-${randomBytes(6).toString('hex')}`,
      cardholder_id: holder.id,
    }),
    201,
  )
  const endpoint = await ok(
    api('POST', '/v1/webhook_endpoints', {
      url: 'https://hooks.example.com/svc',
      enabled_events: ['*'],
    }),
    201,
  )
  const event = (await ok(api('GET', '/v1/events?limit=1'), 200)).data[0]
  const report = await ok(api('POST', '/v1/reports', REPORT_BODY), 201)
  const client = await ok(api('POST', '/v1/oauth_clients', await CLIENT_BODY()), 201)
  const rule = await ok(api('POST', '/v1/authorization_rules', ruleBody(card.id)), 201)
  const backtest = await ok(
    api('POST', `/v1/authorization_rules/${rule.id}/backtests`, BACKTEST_WINDOW),
    202,
  )
  const clock = await ok(api('POST', '/v1/simulate/clocks', {}), 201)
  return {
    sandbox_clock: [{ id: clock.id }],
    cardholder: [{ id: holder.id }],
    account: [{ id: account.id }, { id: basicAccount.id, basic: true }],
    card: [{ id: card.id }, { id: basicCard.id, basic: true }],
    authorization: [{ id: pending.id }, { id: auth.id }],
    transaction: [{ id: txn.id }],
    dispute: [{ id: dispute.id }],
    network_token: [{ id: ntok.id }],
    authentication: [{ id: tdsa.id }],
    esim_order: [{ id: order.id }],
    esim: [{ id: order.esim_id }],
    webhook_endpoint: [{ id: endpoint.id }],
    event: [{ id: event.id }],
    report: [{ id: report.id }],
    oauth_client: [{ id: client.id }],
    authorization_rule: [{ id: rule.id }],
    authorization_rule_backtest: [{ id: backtest.id }],
  }
}

/** A backtest's window (any will do: the sweep needs only its id). */
const BACKTEST_WINDOW = { from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z' }

/** An authorization rule on one card (any rule will do: the sweep needs only its id). */
const ruleBody = (cardId: string) => ({
  name: 'security probe',
  scope: { level: 'card', ids: [cardId] },
  type: 'merchant_lock',
  parameters: { merchants: [{ mcc: '5942' }] },
  mode: 'shadow',
})

/** A client to probe with (not the caller's own: a probe that went through must not revoke the caller). */
const CLIENT_BODY = async () => ({
  label: 'security probe',
  scopes: ['cards:read'],
  jwks: { keys: [(await newKeyPair()).publicJwk] },
})

/** What production can hold without the simulator: a cardholder, an account, a (pending) card, a webhook endpoint, an event, a report, an OAuth client, an authorization rule. */
export async function seedProduction(
  t: TestApp,
  tenant: TestClient,
  token: string,
): Promise<ObjectSet> {
  const program = await t.operator('POST', '/operator/v1/programs', {
    organization_id: tenant.organizationId,
    environment: 'production',
    name: 'Live',
    processor: 'sim_full',
    currencies: ['USD'],
  })
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, program.id, holder.id)
  const card = await ok(t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id)), 201)
  const endpoint = await ok(
    t.api(token, 'POST', '/v1/webhook_endpoints', {
      url: 'https://hooks.example.com/live',
      enabled_events: ['*'],
    }),
    201,
  )
  const event = (await ok(t.api(token, 'GET', '/v1/events?limit=1'), 200)).data[0]
  const report = await ok(t.api(token, 'POST', '/v1/reports', REPORT_BODY), 201)
  const client = await ok(t.api(token, 'POST', '/v1/oauth_clients', await CLIENT_BODY()), 201)
  const rule = await ok(t.api(token, 'POST', '/v1/authorization_rules', ruleBody(card.id)), 201)
  const backtest = await ok(
    t.api(token, 'POST', `/v1/authorization_rules/${rule.id}/backtests`, BACKTEST_WINDOW),
    202,
  )
  return {
    cardholder: [{ id: holder.id }],
    account: [{ id: account.id }],
    card: [{ id: card.id }],
    webhook_endpoint: [{ id: endpoint.id }],
    event: [{ id: event.id }],
    report: [{ id: report.id }],
    oauth_client: [{ id: client.id }],
    authorization_rule: [{ id: rule.id }],
    authorization_rule_backtest: [{ id: backtest.id }],
  }
}
