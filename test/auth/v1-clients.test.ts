import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { getClient } from '../../src/modules/oauth/clients.js'
import { DEFAULT_CLIENT_SCOPES, SCOPES } from '../../src/modules/oauth/scopes.js'
import { seedDemo } from '../../src/seed/demo.js'
import {
  createTenant,
  newKeyPair,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { assertOAuthError, tokenFor } from './support.js'

/** Every scope this deployment issues (the 3-D Secure ones are release-gated). */
const ISSUED = SCOPES.filter((s) => !s.startsWith('authentications:'))

// An organization manages its own OAuth clients through /v1 (decisions.md, "API parity"), with the scope clients:write,
// which no client holds unless it is named for it.
describe('/v1/oauth_clients', () => {
  let t: TestApp
  let admin: TestClient
  let token: string

  before(async () => {
    t = await startTestApp()
    admin = await createTenant(t, { scopes: ISSUED })
    token = await admin.token()
  })
  after(() => t.close())

  const api = (method: string, url: string, body?: unknown, headers?: Record<string, string>) =>
    t.api(token, method, url, body, headers)

  function assertError(
    res: LightMyRequestResponse,
    status: number,
    code: string,
    param?: string,
  ): any {
    assert.equal(res.statusCode, status, res.body)
    const { error } = res.json()
    assert.equal(error.code, code, res.body)
    assert.match(error.request_id, /^req_/)
    if (param !== undefined) assert.equal(error.param, param)
    return error
  }

  async function register(
    body: Record<string, unknown> = {},
    as = token,
  ): Promise<{ client: any; privateJwk: Record<string, unknown> }> {
    const keys = await newKeyPair('ES256', 'k1')
    const res = await t.api(as, 'POST', '/v1/oauth_clients', {
      label: 'backend',
      scopes: ['cards:read'],
      jwks: { keys: [keys.publicJwk] },
      ...body,
    })
    assert.equal(res.statusCode, 201, res.body)
    return { client: res.json(), privateJwk: keys.privateJwk }
  }

  /** A token of a client made here, through the real token endpoint. */
  async function tokenOf(
    clientId: string,
    privateJwk: Record<string, unknown>,
    scope?: string,
  ): Promise<LightMyRequestResponse> {
    return tokenFor(t, { clientId, privateJwk }, scope ? { scope } : {})
  }

  test('clients:write is a scope that no default grants: not new clients, not the demo client', async () => {
    assert.ok((SCOPES as readonly string[]).includes('clients:write'))
    assert.ok(!DEFAULT_CLIENT_SCOPES.includes('clients:write'))
    const org = (await t.operator('POST', '/operator/v1/organizations', { name: 'Defaults' })).id
    const byDefault = await t.operator('POST', '/operator/v1/clients', {
      organization_id: org,
      environment: 'sandbox',
      label: 'x',
      jwks: { keys: [(await newKeyPair()).publicJwk] },
    })
    assert.ok(!byDefault.scopes.includes('clients:write'))
    assert.ok(!byDefault.scopes.includes('cards:secrets'))
    const { file } = await seedDemo(t.deps)
    const demo = await getClient(t.deps, file.client_id)
    assert.ok(!demo.scopes.includes('clients:write'), 'the demo client does not get clients:write')
    // The operator may grant it by name.
    const granted = await t.operator('PATCH', `/operator/v1/clients/${byDefault.id}`, {
      scopes: ['clients:write', 'cards:read'],
    })
    assert.deepEqual(granted.scopes, ['clients:write', 'cards:read'])
    const meta = (
      await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
    ).json()
    assert.ok(meta.scopes_supported.includes('clients:write'))
  })

  test("create: a client of the token's organization and environment, public keys only, and it can get tokens at once", async () => {
    const keys = await newKeyPair('ES256', 'k1')
    const res = await api('POST', '/v1/oauth_clients', {
      label: 'card backend',
      scopes: ['cardholders:read', 'cards:read'],
      jwks: { keys: [keys.publicJwk] },
      ip_allowlist: ['127.0.0.1', '10.0.0.0/8'],
    })
    assert.equal(res.statusCode, 201, res.body)
    const client = res.json()
    assert.match(client.id, /^oc_[0-9A-HJKMNP-TV-Z]{26}$/)
    assert.deepEqual(Object.keys(client).sort(), [
      'created_at',
      'environment',
      'id',
      'ip_allowlist',
      'jwks',
      'label',
      'object',
      'revoked_at',
      'scopes',
      'status',
      'updated_at',
    ])
    assert.equal(client.object, 'oauth_client')
    assert.equal(client.environment, 'sandbox')
    assert.deepEqual(client.scopes, ['cardholders:read', 'cards:read'])
    assert.deepEqual(client.ip_allowlist, ['127.0.0.1', '10.0.0.0/8'])
    assert.equal(client.status, 'active')
    assert.equal(client.revoked_at, null)
    assert.equal(client.jwks.keys[0].d, undefined)
    assert.equal(client.jwks.keys[0].kid, 'k1')

    const stored = await getClient(t.deps, client.id)
    assert.equal(stored.organization_id, admin.organizationId)
    const minted = await tokenOf(client.id, keys.privateJwk)
    assert.equal(minted.statusCode, 200, minted.body)
    assert.equal(minted.json().scope, 'cardholders:read cards:read')
    assert.match(minted.json().access_token, /^at_test_/)

    // Idempotency-Key: the same key and body answer the first client again; nothing new is made.
    const body = {
      label: 'idem',
      scopes: ['cards:read'],
      jwks: { keys: [(await newKeyPair()).publicJwk] },
    }
    const first = await api('POST', '/v1/oauth_clients', body, {
      'idempotency-key': 'create-client-1',
    })
    const second = await api('POST', '/v1/oauth_clients', body, {
      'idempotency-key': 'create-client-1',
    })
    assert.equal(first.statusCode, 201)
    assert.equal(second.headers['idempotent-replay'], 'true')
    assert.equal(second.json().id, first.json().id)
    const idem = (await api('GET', '/v1/oauth_clients?limit=100'))
      .json()
      .data.filter((c: any) => c.label === 'idem')
    assert.equal(idem.length, 1)
  })

  test('create refuses private material, more than three keys, bad keys and bad allowlists, like the operator', async () => {
    const { privateJwk, publicJwk } = await newKeyPair()
    assertError(
      await api('POST', '/v1/oauth_clients', { label: 'x', jwks: { keys: [privateJwk] } }),
      400,
      'invalid_parameter',
      'jwks.keys[0]',
    )
    const four = await Promise.all(
      ['a', 'b', 'c', 'd'].map(async (kid) => (await newKeyPair('ES256', kid)).publicJwk),
    )
    assertError(
      await api('POST', '/v1/oauth_clients', { label: 'x', jwks: { keys: four } }),
      400,
      'invalid_parameter',
      'jwks.keys',
    )
    const three = four.slice(0, 3)
    assert.equal(
      (
        await api('POST', '/v1/oauth_clients', {
          label: 'three keys',
          scopes: ['cards:read'],
          jwks: { keys: three },
        })
      ).statusCode,
      201,
    )
    assertError(
      await api('POST', '/v1/oauth_clients', {
        label: 'x',
        jwks: {
          keys: [{ ...publicJwk, kid: undefined }, (await newKeyPair('ES256', 'k2')).publicJwk],
        },
      }),
      400,
      'invalid_parameter',
      'jwks.keys[0].kid',
    )
    const weak = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({
      format: 'jwk',
    })
    assertError(
      await api('POST', '/v1/oauth_clients', { label: 'x', jwks: { keys: [weak] } }),
      400,
      'invalid_public_key',
    )
    assertError(
      await api('POST', '/v1/oauth_clients', {
        label: 'x',
        jwks: { keys: [publicJwk] },
        ip_allowlist: ['not-an-ip'],
      }),
      400,
      'invalid_parameter',
      'ip_allowlist[0]',
    )
    assertError(
      await api('POST', '/v1/oauth_clients', {
        label: 'x',
        scopes: ['everything'],
        jwks: { keys: [publicJwk] },
      }),
      400,
      'invalid_parameter',
      'scopes[0]',
    )
    assertError(
      await api('POST', '/v1/oauth_clients', {
        label: 'x',
        jwks: { keys: [publicJwk] },
        organization_id: admin.organizationId,
      }),
      400,
      'unknown_parameter',
      'organization_id',
    )
    assertError(
      await api('POST', '/v1/oauth_clients', { jwks: { keys: [publicJwk] } }),
      400,
      'missing_parameter',
      'label',
    )
  })

  test("a caller grants only scopes it holds: its client's, as far as its token was given them", async () => {
    const { client: limitedClient, privateJwk } = await register({
      scopes: ['clients:write', 'cards:read', 'cardholders:read'],
    })
    const limited = (await tokenOf(limitedClient.id, privateJwk)).json().access_token
    const refused = assertError(
      await t.api(limited, 'POST', '/v1/oauth_clients', {
        label: 'wider',
        scopes: ['cards:read', 'cards:write', 'cards:secrets'],
        jwks: { keys: [(await newKeyPair()).publicJwk] },
      }),
      400,
      'invalid_parameter',
      'scopes',
    )
    assert.match(refused.message, /cards:write, cards:secrets/)
    const { client: narrower } = await register({ scopes: ['cards:read'] }, limited)
    assert.deepEqual(narrower.scopes, ['cards:read'])
    // Omitted scopes: the default scopes the caller holds (never clients:write, never cards:secrets).
    const { client: defaults } = await register({ scopes: undefined }, limited)
    assert.deepEqual(defaults.scopes, ['cardholders:read', 'cards:read'])
    const { client: adminDefaults } = await register({ scopes: undefined })
    assert.deepEqual(
      adminDefaults.scopes,
      DEFAULT_CLIENT_SCOPES.filter((s) => ISSUED.includes(s)),
    )
    // Granting clients:write needs holding it, which this caller does.
    const { client: delegate } = await register({ scopes: ['clients:write'] }, limited)
    assert.deepEqual(delegate.scopes, ['clients:write'])
    // A PATCH cannot widen either.
    assertError(
      await t.api(limited, 'PATCH', `/v1/oauth_clients/${narrower.id}`, {
        scopes: ['cards:write'],
      }),
      400,
      'invalid_parameter',
      'scopes',
    )

    // A token asked for fewer scopes than its client holds grants only those.
    const onlyClients = await admin.token('clients:write')
    assertError(
      await t.api(onlyClients, 'POST', '/v1/oauth_clients', {
        label: 'x',
        scopes: ['cards:read'],
        jwks: { keys: [(await newKeyPair()).publicJwk] },
      }),
      400,
      'invalid_parameter',
      'scopes',
    )

    // A client holding a scope the caller lacks cannot be changed or revoked by it (its keys would be the caller's).
    const { client: stronger } = await register({ scopes: ['cards:read', 'cards:secrets'] })
    assertError(
      await t.api(limited, 'PATCH', `/v1/oauth_clients/${stronger.id}`, {
        jwks: { keys: [(await newKeyPair()).publicJwk] },
      }),
      403,
      'insufficient_scope',
    )
    assertError(
      await t.api(limited, 'POST', `/v1/oauth_clients/${stronger.id}/revoke`),
      403,
      'insufficient_scope',
    )
    assert.equal(
      (await t.api(limited, 'GET', `/v1/oauth_clients/${stronger.id}`)).json().status,
      'active',
      'it can still read it',
    )
  })

  test('PATCH changes label, scopes, keys and allowlist; key rotation; a revoked client is final', async () => {
    const { client, privateJwk } = await register({ scopes: ['cards:read', 'cardholders:read'] })
    const renamed = await api('PATCH', `/v1/oauth_clients/${client.id}`, {
      label: 'renamed',
      scopes: ['cards:read'],
    })
    assert.equal(renamed.statusCode, 200, renamed.body)
    assert.equal(renamed.json().label, 'renamed')
    assert.deepEqual(renamed.json().scopes, ['cards:read'])
    assert.equal((await tokenOf(client.id, privateJwk)).json().scope, 'cards:read')

    // Rotation: add the new key beside the old, then remove the old.
    const next = await newKeyPair('ES256', 'k2')
    const both = await api('PATCH', `/v1/oauth_clients/${client.id}`, {
      jwks: { keys: [client.jwks.keys[0], next.publicJwk] },
    })
    assert.equal(both.json().jwks.keys.length, 2)
    assert.equal((await tokenOf(client.id, next.privateJwk)).statusCode, 200)
    await api('PATCH', `/v1/oauth_clients/${client.id}`, { jwks: { keys: [next.publicJwk] } })
    assertOAuthError(await tokenOf(client.id, privateJwk), 401, 'invalid_client')
    assert.equal((await tokenOf(client.id, next.privateJwk)).statusCode, 200)

    const fenced = await api('PATCH', `/v1/oauth_clients/${client.id}`, {
      ip_allowlist: ['203.0.113.0/24'],
    })
    assert.deepEqual(fenced.json().ip_allowlist, ['203.0.113.0/24'])
    assertOAuthError(await tokenOf(client.id, next.privateJwk), 401, 'invalid_client')
    assert.equal(
      (await api('PATCH', `/v1/oauth_clients/${client.id}`, { ip_allowlist: null })).json()
        .ip_allowlist,
      null,
    )
    assertError(
      await api('PATCH', `/v1/oauth_clients/${client.id}`, { jwks: { keys: [next.privateJwk] } }),
      400,
      'invalid_parameter',
      'jwks.keys[0]',
    )
    assertError(
      await api('PATCH', `/v1/oauth_clients/${client.id}`, { status: 'active' }),
      400,
      'unknown_parameter',
      'status',
    )

    const revoked = await api('POST', `/v1/oauth_clients/${client.id}/revoke`)
    assert.equal(revoked.statusCode, 200, revoked.body)
    assertError(
      await api('PATCH', `/v1/oauth_clients/${client.id}`, { label: 'back' }),
      400,
      'invalid_parameter',
      'oauth_client_id',
    )
  })

  test('revoke is immediate and final; a caller may revoke its own client, and its token is refused from the next request', async () => {
    const { client, privateJwk } = await register({ scopes: ['cards:read'] })
    const itsToken = (await tokenOf(client.id, privateJwk)).json().access_token
    assert.equal((await t.api(itsToken, 'GET', '/v1/programs')).statusCode, 200)
    const res = await api('POST', `/v1/oauth_clients/${client.id}/revoke`)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().status, 'revoked')
    assert.ok(res.json().revoked_at)
    assertError(await t.api(itsToken, 'GET', '/v1/programs'), 401, 'invalid_access_token')
    assertOAuthError(await tokenOf(client.id, privateJwk), 401, 'invalid_client')
    const again = await api('POST', `/v1/oauth_clients/${client.id}/revoke`)
    assert.equal(again.statusCode, 200)
    assert.equal(again.json().revoked_at, res.json().revoked_at)

    // Its own client: the answer arrives, then the token that asked is refused too.
    const { client: self, privateJwk: selfKey } = await register({
      scopes: ['clients:write', 'cards:read'],
    })
    const selfToken = (await tokenOf(self.id, selfKey)).json().access_token
    const gone = await t.api(selfToken, 'POST', `/v1/oauth_clients/${self.id}/revoke`)
    assert.equal(gone.statusCode, 200, gone.body)
    assert.equal(gone.json().status, 'revoked')
    assertError(
      await t.api(selfToken, 'GET', `/v1/oauth_clients/${self.id}`),
      401,
      'invalid_access_token',
    )
    assert.equal((await api('GET', `/v1/oauth_clients/${self.id}`)).json().status, 'revoked')
  })

  test("list and retrieve: this organization's clients of this environment, newest first, filtered by status, nothing secret", async () => {
    const org = (await t.operator('POST', '/operator/v1/organizations', { name: 'Lister' })).id
    const sandbox = await createTenant(t, { organizationId: org, scopes: ['clients:write'] })
    const production = await createTenant(t, {
      organizationId: org,
      environment: 'production',
      scopes: ['clients:write', 'cards:read'],
    })
    const sandboxToken = await sandbox.token()
    const { client: one } = await register({ scopes: ['clients:write'] }, sandboxToken)
    const { client: two } = await register({ scopes: ['clients:write'] }, sandboxToken)
    await t.api(sandboxToken, 'POST', `/v1/oauth_clients/${one.id}/revoke`)
    const { client: liveClient } = await register(
      { scopes: ['cards:read'] },
      await production.token(),
    )

    const list = (await t.api(sandboxToken, 'GET', '/v1/oauth_clients')).json()
    assert.equal(list.object, 'list')
    assert.equal(list.url, '/v1/oauth_clients')
    assert.deepEqual(
      list.data.map((c: any) => c.id),
      [two.id, one.id, sandbox.clientId],
    )
    for (const c of list.data) {
      assert.equal(c.organization_id, undefined)
      assert.equal(c.environment, 'sandbox')
      assert.ok(c.jwks.keys.every((k: any) => k.d === undefined))
    }
    assert.deepEqual(
      (await t.api(sandboxToken, 'GET', '/v1/oauth_clients?status=revoked'))
        .json()
        .data.map((c: any) => c.id),
      [one.id],
    )
    const page = (await t.api(sandboxToken, 'GET', '/v1/oauth_clients?limit=1')).json()
    assert.equal(page.has_more, true)
    assert.deepEqual(
      (
        await t.api(
          sandboxToken,
          'GET',
          `/v1/oauth_clients?limit=2&starting_after=${page.next_cursor}`,
        )
      )
        .json()
        .data.map((c: any) => c.id),
      [one.id, sandbox.clientId],
    )

    assert.deepEqual((await t.api(sandboxToken, 'GET', `/v1/oauth_clients/${two.id}`)).json(), two)
    assertError(
      await t.api(sandboxToken, 'GET', `/v1/oauth_clients/${liveClient.id}`),
      403,
      'environment_mismatch',
    )
    assertError(
      await t.api(sandboxToken, 'PATCH', `/v1/oauth_clients/${liveClient.id}`, { label: 'x' }),
      403,
      'environment_mismatch',
    )
    assertError(
      await t.api(sandboxToken, 'POST', `/v1/oauth_clients/${liveClient.id}/revoke`),
      403,
      'environment_mismatch',
    )
    // Another organization's client answers like one that does not exist.
    const missing = assertError(
      await t.api(sandboxToken, 'GET', '/v1/oauth_clients/oc_01J00000000000000000000000'),
      404,
      'client_not_found',
    )
    const foreign = assertError(
      await t.api(sandboxToken, 'GET', `/v1/oauth_clients/${admin.clientId}`),
      404,
      'client_not_found',
    )
    assert.equal(foreign.message, missing.message)
    assertError(
      await t.api(sandboxToken, 'POST', `/v1/oauth_clients/${admin.clientId}/revoke`),
      404,
      'client_not_found',
    )
    assertError(
      await t.api(sandboxToken, 'PATCH', `/v1/oauth_clients/${admin.clientId}`, {
        label: 'mine now',
      }),
      404,
      'client_not_found',
    )
    assert.equal((await getClient(t.deps, admin.clientId)).label, 'test')
  })

  test('every route needs clients:write', async () => {
    const without = await admin.token(ISSUED.filter((s) => s !== 'clients:write').join(' '))
    const { client } = await register()
    for (const [method, url, body] of [
      ['GET', '/v1/oauth_clients'],
      ['POST', '/v1/oauth_clients', { label: 'x', jwks: { keys: [] } }],
      ['GET', `/v1/oauth_clients/${client.id}`],
      ['PATCH', `/v1/oauth_clients/${client.id}`, { label: 'x' }],
      ['POST', `/v1/oauth_clients/${client.id}/revoke`],
    ] as [string, string, unknown?][]) {
      const error = assertError(await t.api(without, method, url, body), 403, 'insufficient_scope')
      assert.match(error.message, /clients:write/)
    }
  })
})
