import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { SCOPES } from '../../src/modules/oauth/scopes.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { cardBody } from '../cards/support.js'
import {
  KINDS,
  NO_SCOPE_ALLOWLIST,
  answer,
  isShared,
  bodyFor,
  errorCode,
  expectedScope,
  fillPath,
  label,
  missingId,
  pathParams,
  recordRoutes,
  seedProduction,
  seedSandbox,
  type Kind,
  type ObjectSet,
  type RouteInfo,
} from './support.js'

// One app for the whole sweep, on a deployment that issues the 3-D Secure scopes. Organization A calls
// with a sandbox and a production client; organization B only owns objects. Refused calls change nothing,
// so the objects are shared by every test.
const recorder = recordRoutes()
let t: TestApp
let a: TestClient
let routes: RouteInfo[]
let sandbox: string
let live: string
let own: ObjectSet
let ownLive: ObjectSet
let stranger: ObjectSet
const lackingTokens = new Map<string, string>()

before(async () => {
  t = await startTestApp({ env: { SVC_RELEASES: 'three_d_secure' }, modules: recorder.modules })
  routes = recorder.routes
  a = await createTenant(t)
  const aLive = await createTenant(t, {
    organizationId: a.organizationId,
    environment: 'production',
  })
  const b = await createTenant(t)
  sandbox = await a.token()
  live = await aLive.token()
  own = await seedSandbox(t, a, sandbox)
  ownLive = await seedProduction(t, aLive, live)
  stranger = await seedSandbox(t, b, await b.token())
  await Promise.all(
    SCOPES.flatMap((scope) => {
      const rest = SCOPES.filter((s) => s !== scope).join(' ')
      return [
        a.token(rest).then((tok) => lackingTokens.set(`sandbox-${scope}`, tok)),
        aLive.token(rest).then((tok) => lackingTokens.set(`live-${scope}`, tok)),
      ]
    }),
  )
})
after(async () => {
  await t?.close()
})

/** A token of the environment holding every scope except `scope`. */
const lacking = (environment: 'sandbox' | 'live', scope: string): string =>
  lackingTokens.get(`${environment}-${scope}`)!

function call(token: string | null, route: RouteInfo, path: string) {
  const body = bodyFor(route)
  return t.app.inject({
    method: route.method as never,
    url: path,
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(body !== undefined ? { payload: body as never } : {}),
  })
}

/** Fills every path parameter with the first object of that kind in `set`, or a fresh unknown id. */
const idsFrom = (set: ObjectSet) => (kind: Kind) =>
  set[kind]?.find((o) => !o.basic)?.id ?? missingId(kind)

const withParams = () => routes.filter((r) => pathParams(r.url).length > 0)

test('the sweep sees every module: at least one operation under each /v1 area', () => {
  const areas = new Set(routes.map((r) => r.url.split('/')[2]))
  for (const area of [
    'programs',
    'events',
    'webhook_endpoints',
    'cardholders',
    'accounts',
    'cards',
    'authorizations',
    'transactions',
    'disputes',
    'network_tokens',
    'authorization_rules',
    'authentications',
    'esim',
    'simulate',
    'oauth_clients',
  ])
    assert.ok(areas.has(area), `no /v1/${area} route was recorded`)
})

test('every /v1 route declares a scope unless it is on the justified allowlist, and the allowlist holds only real scope-free routes', () => {
  const unscoped = routes.filter((r) => !r.scope).map(label)
  assert.deepEqual(
    unscoped.filter((l) => !NO_SCOPE_ALLOWLIST[l]),
    [],
    'routes without a scope and not allowlisted',
  )
  const present = new Set(routes.map(label))
  for (const l of Object.keys(NO_SCOPE_ALLOWLIST)) {
    assert.ok(present.has(l), `${l} is allowlisted but not registered`)
    assert.ok(unscoped.includes(l), `${l} is allowlisted but declares a scope`)
  }
})

test('each route requires the scope the interface scope table and decisions.md name', () => {
  const mismatches = routes.flatMap((r) => {
    const want = expectedScope(r.method, r.url)
    if (want === undefined)
      return [`${label(r)}: no rule says which scope it needs (declares ${r.scope ?? 'none'})`]
    return (want ?? undefined) === r.scope
      ? []
      : [`${label(r)}: declares ${r.scope ?? 'none'}, expected ${want ?? 'none'}`]
  })
  assert.deepEqual(mismatches, [])
})

test('the OpenAPI document publishes the same scope and sandbox-only marker for every operation', async () => {
  const doc = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json()
  const problems = routes.flatMap((r) => {
    const op = doc.paths?.[r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')]?.[r.method.toLowerCase()]
    if (!op) return [`${label(r)}: missing from /openapi.json`]
    const out: string[] = []
    if (op['x-svc-scope'] !== r.scope)
      out.push(`${label(r)}: x-svc-scope ${op['x-svc-scope']} but the route needs ${r.scope}`)
    if (Boolean(op['x-svc-sandbox-only']) !== r.simulator)
      out.push(`${label(r)}: x-svc-sandbox-only does not match`)
    return out
  })
  assert.deepEqual(problems, [])
})

test('every /v1 route refuses a request without a token: 401 missing_credentials', async () => {
  const wrong: string[] = []
  for (const r of routes) {
    const res = await call(null, r, fillPath(r.url, idsFrom(own)))
    if (res.statusCode !== 401 || errorCode(res) !== 'missing_credentials')
      wrong.push(`${label(r)} → ${res.statusCode} ${errorCode(res)}`)
  }
  assert.deepEqual(wrong, [])
})

test('every scoped route refuses a token without its scope: 403 insufficient_scope, after 404 not_found for simulators in production', async () => {
  const wrong: string[] = []
  for (const r of routes.filter((x) => x.scope)) {
    const sandboxRes = await call(lacking('sandbox', r.scope!), r, fillPath(r.url, idsFrom(own)))
    if (sandboxRes.statusCode !== 403 || errorCode(sandboxRes) !== 'insufficient_scope')
      wrong.push(`sandbox ${label(r)} → ${sandboxRes.statusCode} ${errorCode(sandboxRes)}`)
    const liveRes = await call(lacking('live', r.scope!), r, fillPath(r.url, idsFrom(ownLive)))
    const [status, code] = r.simulator ? [404, 'not_found'] : [403, 'insufficient_scope']
    if (liveRes.statusCode !== status || errorCode(liveRes) !== code)
      wrong.push(
        `production ${label(r)} → ${liveRes.statusCode} ${errorCode(liveRes)}, expected ${code}`,
      )
  }
  assert.deepEqual(wrong, [])
})

test("an operation the object's program does not mount answers 404 not_found before the scope is judged", async () => {
  const basicCapabilities: string[] = a.programs.basic.capabilities
  const probed: string[] = []
  const wrong: string[] = []
  for (const r of routes.filter(
    (x) => x.capability && x.scope && !basicCapabilities.includes(x.capability),
  )) {
    const params = pathParams(r.url)
    const basic = params.map((p) => own[p.kind as Kind]?.find((o) => o.basic)?.id)
    if (basic.some((id) => !id)) continue
    probed.push(label(r))
    const res = await call(
      lacking('sandbox', r.scope!),
      r,
      fillPath(r.url, (kind) => own[kind]!.find((o) => o.basic)!.id),
    )
    if (res.statusCode !== 404 || errorCode(res) !== 'not_found')
      wrong.push(`${label(r)} → ${res.statusCode} ${errorCode(res)}`)
  }
  assert.deepEqual(wrong, [])
  for (const l of [
    'POST /v1/accounts/:account_id/credit',
    'POST /v1/accounts/:account_id/debit',
    'POST /v1/accounts/:account_id/block',
    'POST /v1/cards/:card_id/pin-key',
  ]) {
    assert.ok(probed.includes(l), `${l} was not probed on a sim_basic object`)
  }
})

test('routes without a scope answer any valid token, here one holding only esim:read', async () => {
  const token = await a.token('esim:read')
  const wrong: string[] = []
  for (const r of routes.filter((x) => !x.scope)) {
    const res = await call(token, r, fillPath(r.url, idsFrom(own)))
    if (res.statusCode >= 300) wrong.push(`${label(r)} → ${res.statusCode} ${res.body}`)
  }
  assert.deepEqual(wrong, [])
})

test("another organization's object id answers exactly like a missing id (the module's *_not_found), never 200 or 403", async () => {
  const wrong: string[] = []
  for (const r of withParams()) {
    for (const p of pathParams(r.url)) {
      if (!p.kind) {
        wrong.push(`${label(r)}: map :${p.name} to an object kind in support.ts`)
        continue
      }
      if (isShared(p.kind)) continue
      const theirs = stranger[p.kind] ?? []
      if (theirs.length === 0) {
        wrong.push(`${label(r)}: seed a ${p.kind} in seedSandbox`)
        continue
      }
      const probe = async (id: string) => {
        const res = await call(
          sandbox,
          r,
          fillPath(r.url, (kind, name) => (name === p.name ? id : idsFrom(own)(kind))),
        )
        return JSON.parse(JSON.stringify(answer(res)).replaceAll(id, '<id>'))
      }
      const missing = await probe(missingId(p.kind))
      const notFound = KINDS[p.kind].notFound
      if (missing.status !== 404 || missing.body?.error?.code !== notFound) {
        wrong.push(
          `${label(r)}: a missing :${p.name} → ${missing.status} ${JSON.stringify(missing.body)}, expected 404 ${notFound} (add a valid body to BODIES?)`,
        )
        continue
      }
      for (const o of theirs) {
        const got = await probe(o.id)
        try {
          assert.deepEqual(got, missing)
        } catch {
          wrong.push(
            `${label(r)}: another org's ${p.kind}${o.basic ? ' (sim_basic)' : ''} → ${got.status} ${JSON.stringify(got.body)}`,
          )
        }
      }
    }
  }
  assert.deepEqual(wrong, [])
})

test("the organization's own object from the other environment answers 403 environment_mismatch (simulators in production: 404 not_found)", async () => {
  const wrong: string[] = []
  let reverse = 0
  for (const r of withParams()) {
    const kinds = pathParams(r.url).map((p) => p.kind as Kind)
    if (kinds.every(isShared)) continue
    const res = await call(live, r, fillPath(r.url, idsFrom(own)))
    const [status, code] = r.simulator ? [404, 'not_found'] : [403, 'environment_mismatch']
    if (res.statusCode !== status || errorCode(res) !== code)
      wrong.push(
        `production token, sandbox ${kinds.join('+')} ${label(r)} → ${res.statusCode} ${res.body}`,
      )
    if (!kinds.every((k) => isShared(k) || ownLive[k])) continue
    reverse++
    const back = await call(sandbox, r, fillPath(r.url, idsFrom(ownLive)))
    if (back.statusCode !== 403 || errorCode(back) !== 'environment_mismatch')
      wrong.push(
        `sandbox token, production ${kinds.join('+')} ${label(r)} → ${back.statusCode} ${back.body}`,
      )
  }
  assert.deepEqual(wrong, [])
  assert.ok(reverse >= 20, `only ${reverse} routes were probed with production objects`)
})

/** What a request naming an object in its body or query needs from the caller's own environment. */
interface Own {
  program: string
  holder: string
  account: string
  esim?: string
  topUp?: string
  pkg: string
  event: string
}
interface Reference {
  label: string
  kind: Kind
  list?: boolean
  request: (id: string, own: Own) => { method: string; url: string; body?: unknown } | null
}

const MERCHANT = { name: 'Probe Books', mcc: '5942', city: 'Springfield', country: 'USA' }
const ref = () => `sec-${Math.random().toString(36).slice(2, 10)}`
const post = (url: string, body: unknown) => ({ method: 'POST', url, body })

/** Operations that name an object in the body or a filter: the tenancy answers apply to those ids too. */
const REFERENCES: Reference[] = [
  {
    label: 'POST /v1/accounts cardholder_id',
    kind: 'cardholder',
    request: (id, o) =>
      post('/v1/accounts', { program_id: o.program, cardholder_id: id, currency: 'USD' }),
  },
  {
    label: 'POST /v1/cards cardholder_id',
    kind: 'cardholder',
    request: (id, o) => post('/v1/cards', cardBody(id, o.account)),
  },
  {
    label: 'POST /v1/cards account_id',
    kind: 'account',
    request: (id, o) => post('/v1/cards', cardBody(o.holder, id)),
  },
  {
    label: 'POST /v1/disputes transaction_id',
    kind: 'transaction',
    request: (id) => post('/v1/disputes', { transaction_id: id, reason: 'other' }),
  },
  {
    label: 'POST /v1/esim/orders cardholder_id',
    kind: 'cardholder',
    request: (id, o) =>
      post('/v1/esim/orders', { package_id: o.pkg, reference: ref(), cardholder_id: id }),
  },
  {
    label: 'POST /v1/esim/orders account_id',
    kind: 'account',
    request: (id, o) =>
      post('/v1/esim/orders', { package_id: o.pkg, reference: ref(), account_id: id }),
  },
  {
    label: 'POST /v1/esim/h5_links cardholder_id',
    kind: 'cardholder',
    request: (id) => post('/v1/esim/h5_links', { cardholder_id: id }),
  },
  {
    label: 'POST /v1/esim/h5_links pay_from_account_id',
    kind: 'account',
    request: (id, o) =>
      post('/v1/esim/h5_links', {
        cardholder_id: o.holder,
        allow_purchases: true,
        pay_from_account_id: id,
      }),
  },
  {
    label: 'POST /v1/esim/esims/{id}/top_ups account_id',
    kind: 'account',
    request: (id, o) =>
      o.esim
        ? post(`/v1/esim/esims/${o.esim}/top_ups`, {
            top_up_id: o.topUp,
            reference: ref(),
            account_id: id,
          })
        : null,
  },
  {
    label: 'POST /v1/simulate/authorizations card_id',
    kind: 'card',
    request: (id) =>
      post('/v1/simulate/authorizations', {
        card_id: id,
        amount: 100,
        currency: 'USD',
        merchant: MERCHANT,
      }),
  },
  {
    label: 'POST /v1/simulate/refunds card_id',
    kind: 'card',
    request: (id) =>
      post('/v1/simulate/refunds', {
        card_id: id,
        amount: 100,
        currency: 'USD',
        merchant: MERCHANT,
      }),
  },
  {
    label: 'POST /v1/simulate/network_tokens card_id',
    kind: 'card',
    request: (id) => post('/v1/simulate/network_tokens', { card_id: id, wallet: 'google_pay' }),
  },
  {
    label: 'POST /v1/simulate/authentications card_id',
    kind: 'card',
    request: (id) =>
      post('/v1/simulate/authentications', {
        card_id: id,
        amount: 100,
        currency: 'USD',
        merchant: MERCHANT,
      }),
  },
  {
    label: 'POST /v1/events/{id}/replay webhook_endpoint_id',
    kind: 'webhook_endpoint',
    request: (id, o) => post(`/v1/events/${o.event}/replay`, { webhook_endpoint_id: id }),
  },
  ...(
    [
      ['/v1/accounts', 'cardholder_id', 'cardholder'],
      ['/v1/cards', 'cardholder_id', 'cardholder'],
      ['/v1/cards', 'account_id', 'account'],
      ['/v1/authorizations', 'card_id', 'card'],
      ['/v1/authorizations', 'account_id', 'account'],
      ['/v1/transactions', 'card_id', 'card'],
      ['/v1/transactions', 'account_id', 'account'],
      ['/v1/transactions', 'authorization_id', 'authorization'],
      ['/v1/network_tokens', 'card_id', 'card'],
      ['/v1/disputes', 'transaction_id', 'transaction'],
      ['/v1/disputes', 'card_id', 'card'],
      ['/v1/esim/orders', 'cardholder_id', 'cardholder'],
      ['/v1/esim/esims', 'cardholder_id', 'cardholder'],
      ['/v1/authentications', 'card_id', 'card'],
    ] as [string, string, Kind][]
  ).map(
    ([url, filter, kind]): Reference => ({
      label: `GET ${url}?${filter}=`,
      kind,
      list: true,
      request: (id) => ({ method: 'GET', url: `${url}?${filter}=${id}` }),
    }),
  ),
]

async function ownContext(token: string, set: ObjectSet): Promise<Own> {
  const programs = (await t.api(token, 'GET', '/v1/programs')).json().data
  const pkg = (await t.api(sandbox, 'GET', '/v1/esim/packages?status=on_sale')).json().data[0].id
  const esim = set.esim?.[0].id
  const topUp = esim
    ? (await t.api(token, 'GET', `/v1/esim/esims/${esim}/top_ups`)).json().data[0]?.id
    : undefined
  return {
    program: programs.find((p: any) => p.processor === 'sim_full').id,
    holder: set.cardholder![0].id,
    account: set.account![0].id,
    esim,
    topUp,
    pkg,
    event: set.event![0].id,
  }
}

const send = (token: string, r: { method: string; url: string; body?: unknown }) =>
  t.app.inject({
    method: r.method as never,
    url: r.url,
    headers: { authorization: `Bearer ${token}` },
    ...(r.body !== undefined ? { payload: r.body as never } : {}),
  })

test("ids in request bodies and list filters follow the same rule: another organization's id answers like a missing one", async () => {
  const mine = await ownContext(sandbox, own)
  const wrong: string[] = []
  for (const r of REFERENCES) {
    const probe = async (id: string) =>
      JSON.parse(
        JSON.stringify(answer(await send(sandbox, r.request(id, mine)!))).replaceAll(id, '<id>'),
      )
    const missing = await probe(missingId(r.kind))
    const ok =
      missing.body?.error?.code === KINDS[r.kind].notFound || (r.list && missing.status === 200)
    if (!ok) {
      wrong.push(
        `${r.label}: a missing ${r.kind} → ${missing.status} ${JSON.stringify(missing.body)}`,
      )
      continue
    }
    for (const o of stranger[r.kind]!) {
      const got = await probe(o.id)
      try {
        assert.deepEqual(got, missing)
      } catch {
        wrong.push(
          `${r.label}: another org's ${r.kind} → ${got.status} ${JSON.stringify(got.body)}`,
        )
      }
    }
  }
  assert.deepEqual(wrong, [])
})

test("an id of the organization's other environment in a request body or a list filter answers 403 environment_mismatch", async () => {
  const contexts = {
    sandbox: await ownContext(sandbox, own),
    live: await ownContext(live, ownLive),
  }
  const wrong: string[] = []
  for (const r of REFERENCES) {
    for (const [token, env, ids] of [
      [live, 'live', own],
      [sandbox, 'sandbox', ownLive],
    ] as const) {
      const id = ids[r.kind]?.[0].id
      const request = id ? r.request(id, contexts[env]) : null
      if (!request || (env === 'live' && request.url.startsWith('/v1/simulate/'))) continue
      const res = await send(token, request)
      if (res.statusCode !== 403 || errorCode(res) !== 'environment_mismatch')
        wrong.push(
          `${env} token, ${r.label} of the other environment → ${res.statusCode} ${res.body}`,
        )
    }
  }
  assert.deepEqual(wrong, [])
})
