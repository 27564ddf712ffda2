import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import { SCOPES } from '../../src/modules/oauth/index.js'
import {
  createTenant,
  requestToken,
  startTestApp,
  TOKEN_URL,
  type TestApp,
} from '../helpers/app.js'
import { Agent, csrfOf, person, type Person } from './support.js'

/** The organization's API clients page (Developers → API clients): each form goes through the /v1 services, audited; viewers only read. */

const PAGE = '/console/developers/api-clients'

let t: TestApp
let owner: Person
let developer: Person
let viewer: Person
let orgId: string

before(async () => {
  t = await startTestApp()
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Hooli' })).id
  owner = await person(t, 'owner', orgId)
  developer = await person(t, 'developer', orgId)
  viewer = await person(t, 'viewer', orgId)
})
after(() => t.close())

function ecKey(kid?: string) {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  const pub = { ...publicKey.export({ format: 'jwk' }), ...(kid ? { kid } : {}) }
  const priv = { ...privateKey.export({ format: 'jwk' }), ...(kid ? { kid } : {}) }
  return { jwks: { keys: [pub] }, publicJwk: pub, privateJwk: priv, publicKey, privateKey }
}

async function audits(action: string, objectId?: string) {
  let q = t.deps.db.selectFrom('audit_log').selectAll().where('action', '=', action)
  if (objectId) q = q.where('object_id', '=', objectId)
  return q.orderBy('id').execute()
}

async function userId(p: Person): Promise<string> {
  return (
    await t.deps.db
      .selectFrom('users')
      .select('id')
      .where('email', '=', p.email)
      .executeTakeFirstOrThrow()
  ).id
}

async function follow(
  agent: Agent,
  res: { statusCode: number; headers: Record<string, unknown>; body: string },
) {
  assert.equal(res.statusCode, 303, res.body.slice(0, 1500))
  const page = await agent.get(String(res.headers.location))
  assert.equal(page.statusCode, 200)
  return page
}

function main(body: string): string {
  return body.slice(body.indexOf('<main'))
}

async function tokenWith(clientId: string, privateJwk: Record<string, unknown>) {
  const assertion = await signClientAssertion({
    clientId,
    privateJwk,
    audience: TOKEN_URL,
    nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
  })
  return requestToken(t, tokenRequestBody(assertion))
}

/** Registers a client through the page as `p`; answers its id. */
async function register(p: Person, fields: Record<string, string | string[]>): Promise<string> {
  const res = await p.agent.submit(`${PAGE}/new`, fields, PAGE)
  assert.equal(res.statusCode, 303, res.body.slice(0, 1500))
  return /\/(oc_\w+)$/.exec(String(res.headers.location))![1]
}

const client = (id: string) => t.operator('GET', `/operator/v1/clients/${id}`)

describe('registering', () => {
  test('an owner pastes a JWK Set: the sandbox client is created, audited, shown with how to get a token, and gets one', async () => {
    const key = ecKey('hooli-1')
    const res = await owner.agent.submit(
      `${PAGE}/new`,
      {
        label: 'Hooli backend',
        keys: JSON.stringify(key.jwks),
        scopes: ['cards:read', 'cardholders:read'],
        ip_allowlist: '',
      },
      PAGE,
    )
    const page = await follow(owner.agent, res)
    const id = /\/(oc_\w+)$/.exec(String(res.headers.location))![1]
    const body = main(page.body)
    assert.match(body, new RegExp(`is registered: its id is ${id}`))
    assert.match(body, /hooli-1/)
    assert.match(body, new RegExp(`curl -s -X POST ${TOKEN_URL.replace(/[/.]/g, '\\$&')}`))
    assert.match(
      body,
      /client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer/,
    )
    const stored = await client(id)
    assert.deepEqual(
      [
        stored.organization_id,
        stored.environment,
        stored.label,
        stored.scopes,
        stored.ip_allowlist,
      ],
      [orgId, 'sandbox', 'Hooli backend', ['cards:read', 'cardholders:read'], null],
    )
    const [row] = await audits('client.created', id)
    assert.ok(row, 'audited')
    assert.deepEqual([row.organization_id, row.actor_user_id], [orgId, await userId(owner)])
    assert.equal((await tokenWith(id, key.privateJwk)).statusCode, 200)

    const list = main((await viewer.agent.get(PAGE)).body)
    assert.match(list, new RegExp(id))
    assert.match(list, /Hooli backend/)
    assert.match(list, /hooli-1/)
  })

  test('a developer registers from a PEM public key with an allowlist; the defaults are ticked, never the named-only scopes', async () => {
    const form = (await developer.agent.get(`${PAGE}/new`)).body
    assert.match(form, /value="cards:read" checked/)
    assert.match(form, /value="cards:secrets">/, 'cards:secrets is offered, not ticked')
    assert.match(form, /value="clients:write">/, 'clients:write is offered, not ticked')
    const key = ecKey()
    const id = await register(developer, {
      label: 'From PEM',
      keys: key.publicKey.export({ type: 'spki', format: 'pem' }) as string,
      scopes: 'cards:read',
      ip_allowlist: '198.51.100.7\n203.0.113.0/24',
    })
    const stored = await client(id)
    assert.deepEqual(stored.ip_allowlist, ['198.51.100.7', '203.0.113.0/24'])
    assert.match(
      stored.jwks.keys[0].kid,
      /^[A-Za-z0-9_-]{43}$/,
      'a pasted key without a kid gets its thumbprint',
    )
    assert.equal((await audits('client.created', id))[0].actor_user_id, await userId(developer))
  })

  test('only grantable scopes are offered, and a scope beyond them is refused with the form kept (422)', async () => {
    const form = (await owner.agent.get(`${PAGE}/new`)).body
    const offered = [...form.matchAll(/name="scopes" value="([^"]+)"/g)].map((m) => m[1])
    assert.deepEqual(
      offered,
      [...SCOPES],
      'a member may grant every scope, so every client of the organization stays manageable',
    )
    const key = ecKey('k')
    const before = (await audits('client.created')).length
    for (const scope of ['root:all', 'cards:everything']) {
      const res = await owner.agent.submit(
        `${PAGE}/new`,
        {
          label: 'Too wide',
          keys: JSON.stringify(key.jwks),
          scopes: ['cards:read', scope],
          ip_allowlist: '192.0.2.1',
        },
        PAGE,
      )
      assert.equal(res.statusCode, 422, scope)
      assert.match(res.body, new RegExp(`role="alert"[^>]*>[^<]*${scope}`))
      assert.match(res.body, /value="Too wide"/, 'the label is kept')
      assert.match(res.body, />192\.0\.2\.1</, 'the allowlist is kept')
      assert.match(res.body, /&quot;kid&quot;:&quot;k&quot;/, 'the public key is kept')
    }
    assert.equal((await audits('client.created')).length, before)
  })

  test("a service refusal (wrong curve, bad range, no label) is the page's error, with the values kept", async () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' }).publicKey.export({
      type: 'spki',
      format: 'pem',
    }) as string
    const curve = await owner.agent.submit(
      `${PAGE}/new`,
      { label: 'P-384', keys: p384, scopes: 'cards:read' },
      PAGE,
    )
    assert.equal(curve.statusCode, 422)
    assert.match(curve.body, /P-256/)
    const range = await owner.agent.submit(
      `${PAGE}/new`,
      {
        label: 'Ranged',
        keys: JSON.stringify(ecKey().jwks),
        scopes: 'cards:read',
        ip_allowlist: 'not-an-address',
      },
      PAGE,
    )
    assert.equal(range.statusCode, 422)
    assert.match(range.body, /not an IP address or CIDR range/)
    assert.match(range.body, /not-an-address/)
    const label = await owner.agent.submit(
      `${PAGE}/new`,
      { label: '  ', keys: JSON.stringify(ecKey().jwks), scopes: 'cards:read' },
      PAGE,
    )
    assert.equal(label.statusCode, 422)
    assert.match(label.body, /label of 1 to 200/)
  })

  test('private key material is refused and never shown back; no page shows a private member', async () => {
    const key = ecKey('secret-1')
    const before = (await audits('client.created')).length
    const jwk = await owner.agent.submit(
      `${PAGE}/new`,
      { label: 'Leaky', keys: JSON.stringify({ keys: [key.privateJwk] }), scopes: 'cards:read' },
      PAGE,
    )
    assert.equal(jwk.statusCode, 422)
    assert.match(jwk.body, /private key: it is never accepted/)
    assert.doesNotMatch(jwk.body, new RegExp(String(key.privateJwk.d)))
    const pem = await owner.agent.submit(
      `${PAGE}/new`,
      {
        label: 'Leaky',
        keys: key.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
        scopes: 'cards:read',
      },
      PAGE,
    )
    assert.equal(pem.statusCode, 422)
    assert.doesNotMatch(pem.body, /PRIVATE KEY/)
    assert.equal((await audits('client.created')).length, before)

    const id = await register(owner, {
      label: 'Public only',
      keys: JSON.stringify(key.jwks),
      scopes: 'cards:read',
    })
    const add = await owner.agent.submit(
      `${PAGE}/${id}`,
      { keys: JSON.stringify(ecKey('other').privateJwk) },
      `${PAGE}/${id}/keys`,
    )
    assert.equal(add.statusCode, 422)
    assert.match(add.body, /private key: it is never accepted/)
    for (const path of [PAGE, `${PAGE}/${id}`, `${PAGE}/${id}/revoke`]) {
      const body = main((await owner.agent.get(path)).body)
      assert.doesNotMatch(body, new RegExp(String(key.privateJwk.d)), path)
      assert.doesNotMatch(body, /&quot;d&quot;/, path)
    }
  })
})

describe('roles and scope', () => {
  test('a viewer reads the list and a client, and every change answers 403 and changes nothing', async () => {
    const id = await register(owner, {
      label: 'Viewer target',
      keys: JSON.stringify(ecKey('v1').jwks),
      scopes: 'cards:read',
    })
    assert.equal((await viewer.agent.get(PAGE)).statusCode, 200)
    assert.equal((await viewer.agent.get(`${PAGE}/new`)).statusCode, 200)
    const detail = await viewer.agent.get(`${PAGE}/${id}`)
    assert.equal(detail.statusCode, 200)
    const csrf = csrfOf(detail.body)
    const before = (await t.deps.db.selectFrom('audit_log').select('id').execute()).length
    const attempts: [string, Record<string, string>][] = [
      [PAGE, { label: 'Sneaky', keys: JSON.stringify(ecKey().jwks), scopes: 'cards:read' }],
      [`${PAGE}/${id}`, { label: 'Renamed', scopes: 'cards:write' }],
      [`${PAGE}/${id}/allowlist`, { ip_allowlist: '192.0.2.0/24' }],
      [`${PAGE}/${id}/keys`, { keys: JSON.stringify(ecKey('v2').jwks) }],
      [`${PAGE}/${id}/keys/remove`, { kid: 'v1' }],
      [`${PAGE}/${id}/revoke`, { confirm: 'yes' }],
    ]
    for (const [path, fields] of attempts) {
      const res = await viewer.agent.post(path, { _csrf: csrf, ...fields })
      assert.equal(res.statusCode, 403, path)
    }
    const stored = await client(id)
    assert.deepEqual(
      [stored.label, stored.scopes, stored.ip_allowlist, stored.jwks.keys.length, stored.status],
      ['Viewer target', ['cards:read'], null, 1, 'active'],
    )
    assert.equal((await t.deps.db.selectFrom('audit_log').select('id').execute()).length, before)
  })

  test("another organization's client is not found; a production client is not in the sandbox list", async () => {
    const other = await createTenant(t)
    assert.equal((await owner.agent.get(`${PAGE}/${other.clientId}`)).statusCode, 404)
    const home = await owner.agent.get('/console')
    assert.equal(
      (
        await owner.agent.post(`${PAGE}/${other.clientId}/revoke`, {
          _csrf: csrfOf(home.body),
          confirm: 'yes',
        })
      ).statusCode,
      404,
    )
    assert.equal((await client(other.clientId)).status, 'active')

    const live = await createTenant(t, { organizationId: orgId, environment: 'production' })
    assert.doesNotMatch((await owner.agent.get(PAGE)).body, new RegExp(live.clientId))
    assert.equal(
      (await owner.agent.get(`${PAGE}/${live.clientId}`)).statusCode,
      403,
      "the other environment's client",
    )
    const switcher = new Agent(t)
    for (const [k, v] of owner.agent.cookies) switcher.cookies.set(k, v)
    await switcher.post('/console/environment', {
      _csrf: csrfOf(home.body),
      environment: 'production',
      return_to: PAGE,
    })
    const production = await switcher.get(PAGE)
    assert.match(production.body, new RegExp(live.clientId))
    assert.match(production.body, /Production API clients/)
    await switcher.post('/console/environment', {
      _csrf: csrfOf(home.body),
      environment: 'sandbox',
      return_to: PAGE,
    })
  })
})

describe('changing a client', () => {
  test('scopes (only grantable ones) and the allowlist change, each audited; a wrong range is refused with what was typed', async () => {
    const key = ecKey('s1')
    const id = await register(developer, {
      label: 'Scoped',
      keys: JSON.stringify(key.jwks),
      scopes: 'cards:read',
    })
    const path = `${PAGE}/${id}`
    await follow(
      developer.agent,
      await developer.agent.submit(path, {
        label: 'Scoped backend',
        scopes: ['cards:read', 'cards:write', 'cards:secrets'],
      }),
    )
    let stored = await client(id)
    assert.deepEqual(
      [stored.label, stored.scopes],
      ['Scoped backend', ['cards:read', 'cards:write', 'cards:secrets']],
    )
    assert.equal((await audits('client.updated', id)).length, 1)
    const wide = await developer.agent.submit(path, {
      label: 'Scoped backend',
      scopes: ['cards:read', 'payments:all'],
    })
    assert.equal(wide.statusCode, 422)
    assert.match(wide.body, /you do not hold payments:all/)
    assert.match(wide.body, /value="cards:read" checked/, 'the ticked scopes are kept')
    assert.deepEqual((await client(id)).scopes, ['cards:read', 'cards:write', 'cards:secrets'])

    await follow(
      developer.agent,
      await developer.agent.submit(path, { ip_allowlist: '192.0.2.0/24' }, `${path}/allowlist`),
    )
    stored = await client(id)
    assert.deepEqual(stored.ip_allowlist, ['192.0.2.0/24'])
    assert.equal((await audits('client.updated', id)).length, 2)
    const bad = await developer.agent.submit(
      path,
      { ip_allowlist: '192.0.2.0/24\nnope' },
      `${path}/allowlist`,
    )
    assert.equal(bad.statusCode, 422)
    assert.match(bad.body, /nope is not an IP address/)
    assert.match(bad.body, />192\.0\.2\.0\/24\nnope</)
    const unchanged = await developer.agent.submit(
      path,
      { ip_allowlist: '192.0.2.0/24' },
      `${path}/allowlist`,
    )
    assert.equal(unchanged.statusCode, 303)
    assert.equal(
      (await audits('client.updated', id)).length,
      2,
      'an unchanged allowlist writes nothing',
    )
    // The allowlist holds: a token from another address is refused, until it is lifted.
    assert.equal((await tokenWith(id, key.privateJwk)).statusCode, 401)
    await follow(
      developer.agent,
      await developer.agent.submit(path, { ip_allowlist: '' }, `${path}/allowlist`),
    )
    assert.equal((await client(id)).ip_allowlist, null)
    assert.equal((await tokenWith(id, key.privateJwk)).statusCode, 200)
  })

  test('keys are added and removed (rotation), never the last one; each change is audited', async () => {
    const first = ecKey('first')
    const id = await register(owner, {
      label: 'Rotating',
      keys: JSON.stringify(first.jwks),
      scopes: 'cards:read',
    })
    const path = `${PAGE}/${id}`
    const single = await owner.agent.get(path)
    assert.doesNotMatch(single.body, /Remove key first/, 'the only key has no Remove button')
    const last = await owner.agent.post(`${path}/keys/remove`, {
      _csrf: csrfOf(single.body),
      kid: 'first',
    })
    assert.equal(last.statusCode, 422)
    assert.match(last.body, /only key/)

    const second = ecKey()
    const added = await follow(
      owner.agent,
      await owner.agent.submit(
        path,
        { keys: second.publicKey.export({ type: 'spki', format: 'pem' }) as string },
        `${path}/keys`,
      ),
    )
    assert.match(added.body, /is added/)
    let stored = await client(id)
    assert.equal(stored.jwks.keys.length, 2)
    const secondKid = stored.jwks.keys[1].kid
    assert.match(added.body, new RegExp(`Remove key ${secondKid}`))
    assert.equal((await audits('client.key_added', id)).length, 1)

    await follow(
      owner.agent,
      await owner.agent.submit(path, { kid: 'first' }, `${path}/keys/remove`),
    )
    stored = await client(id)
    assert.deepEqual(
      stored.jwks.keys.map((k: any) => k.kid),
      [secondKid],
    )
    assert.equal((await audits('client.key_removed', id)).length, 1)
    assert.equal(
      (await tokenWith(id, first.privateJwk)).statusCode,
      401,
      'the removed key no longer signs',
    )
    assert.equal((await tokenWith(id, { ...second.privateJwk, kid: secondKid })).statusCode, 200)
    const unknown = await owner.agent.submit(path, { kid: 'nope' }, `${path}/keys/remove`)
    assert.equal(unknown.statusCode, 422)
  })

  test('revoking needs the confirmation ticked; then the client is revoked at once, audited, and read-only', async () => {
    const tenant = await createTenant(t, { organizationId: orgId })
    const token = await tenant.token()
    const path = `${PAGE}/${tenant.clientId}`
    const confirm = await owner.agent.get(`${path}/revoke`)
    assert.equal(confirm.statusCode, 200)
    assert.match(confirm.body, /cannot be undone/)
    assert.match(confirm.body, /name="confirm" value="yes" required/)
    const unticked = await owner.agent.post(`${path}/revoke`, { _csrf: csrfOf(confirm.body) })
    assert.equal(unticked.statusCode, 422)
    assert.match(unticked.body, /Tick the box/)
    assert.equal((await client(tenant.clientId)).status, 'active')
    assert.equal((await audits('client.revoked', tenant.clientId)).length, 0)

    const page = await follow(
      owner.agent,
      await owner.agent.post(`${path}/revoke`, { _csrf: csrfOf(confirm.body), confirm: 'yes' }),
    )
    assert.match(page.body, /is revoked/)
    assert.doesNotMatch(page.body, /Revoke this client/)
    assert.doesNotMatch(page.body, /Add key/)
    assert.equal((await client(tenant.clientId)).status, 'revoked')
    assert.equal(
      (await t.api(token, 'GET', '/v1/cardholders')).statusCode,
      401,
      'its tokens stop working',
    )
    const rows = await audits('client.revoked', tenant.clientId)
    assert.equal(rows.length, 1)
    assert.deepEqual([rows[0].organization_id, rows[0].actor_user_id], [orgId, await userId(owner)])
    await owner.agent.post(`${path}/revoke`, { _csrf: csrfOf(confirm.body), confirm: 'yes' })
    assert.equal(
      (await audits('client.revoked', tenant.clientId)).length,
      1,
      'revoking again writes nothing',
    )
    const change = await owner.agent.post(`${path}/keys`, {
      _csrf: csrfOf(confirm.body),
      keys: JSON.stringify(ecKey('late').jwks),
    })
    assert.equal(change.statusCode, 422)
    assert.match(change.body, /revoked client cannot be changed/)
  })
})
