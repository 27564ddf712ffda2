import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { assertGenericRefusal, assertOAuthError, tokenFor } from './support.js'

// A route of this test only: requires cardholders:read, answers who is calling.
const SCOPED = '/v1/__auth_test/scoped'

let t: TestApp
let tenant: TestClient

before(async () => {
  // app.inject connects from 127.0.0.1: named as the proxy, so a test's X-Forwarded-For stands for the caller's address.
  t = await startTestApp({
    env: { TRUSTED_PROXIES: '127.0.0.1' },
    beforeReady: (app) => {
      app.get(
        SCOPED,
        { config: { scope: 'cardholders:read' }, schema: { hide: true } },
        async (req) => ({
          organization_id: req.ctx.organizationId,
          environment: req.ctx.environment,
          client_id: req.ctx.clientId,
          scopes: [...req.ctx.scopes],
        }),
      )
    },
  })
  tenant = await createTenant(t, {
    scopes: ['cardholders:read', 'cardholders:write', 'accounts:read'],
  })
})
after(() => t.close())

/** Checks the /v1 envelope of an authentication failure. */
function assertApiError(
  res: LightMyRequestResponse,
  status: number,
  code: string,
  type: string,
): void {
  assert.equal(res.statusCode, status, res.body)
  const { error } = res.json()
  assert.equal(error.code, code)
  assert.equal(error.type, type)
  assert.equal(typeof error.message, 'string')
  assert.ok(error.doc_url.endsWith(`/docs/errors#${code}`), error.doc_url)
  assert.match(error.request_id, /^req_/)
  assert.equal(res.headers['svc-request-id'], error.request_id)
}

describe('missing_credentials and invalid_access_token', () => {
  test('a /v1 request without Authorization answers 401 missing_credentials', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v1/programs' })
    assertApiError(res, 401, 'missing_credentials', 'authentication_error')
  })

  test('an unknown /v1 path without a token also answers 401 missing_credentials (nothing to probe)', async () => {
    assertApiError(
      await t.app.inject({ method: 'GET', url: '/v1/no_such_thing' }),
      401,
      'missing_credentials',
      'authentication_error',
    )
  })

  test('a percent-encoded /v1 path still requires a token (authentication follows the matched route)', async () => {
    for (const url of ['/%761/programs', '/v1/%70rograms', `/%76%31${SCOPED.slice(3)}`]) {
      assertApiError(
        await t.app.inject({ method: 'GET', url }),
        401,
        'missing_credentials',
        'authentication_error',
      )
    }
    assert.equal((await t.api(await tenant.token(), 'GET', '/%761/programs')).statusCode, 200)
    assertApiError(
      await t.api(await tenant.token('accounts:read'), 'GET', `/%761${SCOPED.slice(3)}`),
      403,
      'insufficient_scope',
      'permission_error',
    )
  })

  test('an unknown token answers 401 invalid_access_token', async () => {
    assertApiError(
      await t.api(`at_test_${'x'.repeat(43)}`, 'GET', '/v1/programs'),
      401,
      'invalid_access_token',
      'authentication_error',
    )
    assertApiError(
      await t.api(`at_live_${'x'.repeat(43)}`, 'GET', '/v1/programs'),
      401,
      'invalid_access_token',
      'authentication_error',
    )
    assertApiError(
      await t.api('not-a-token', 'GET', '/v1/programs'),
      401,
      'invalid_access_token',
      'authentication_error',
    )
  })

  test('a token of the wrong kind says which kind each API takes', async () => {
    const operatorOnV1 = await t.api(t.deps.config.operatorToken, 'GET', '/v1/programs')
    assertApiError(operatorOnV1, 401, 'invalid_access_token', 'authentication_error')
    assert.equal(
      operatorOnV1.json().error.message,
      'This is the operator token, which only /operator/v1 accepts; /v1 takes an access token from POST /oauth/token.',
    )
    assert.ok(!operatorOnV1.body.includes(t.deps.config.operatorToken))
    const accessOnOperator = await t.api(await tenant.token(), 'GET', '/operator/v1/organizations')
    assertApiError(accessOnOperator, 401, 'invalid_access_token', 'authentication_error')
    assert.equal(
      accessOnOperator.json().error.message,
      'This is an access token, which only /v1 accepts; /operator/v1 takes the operator token (SVC_OPERATOR_TOKEN).',
    )
    const unknownOnOperator = await t.api('nope', 'GET', '/operator/v1/organizations')
    assert.match(unknownOnOperator.json().error.message, /^Not the operator token/)
    assert.match(
      (await t.api('not-a-token', 'GET', '/v1/programs')).json().error.message,
      /^Not an access token/,
    )
  })

  test('a malformed Authorization header answers 401 invalid_access_token', async () => {
    const token = await tenant.token()
    for (const header of [
      `Basic ${Buffer.from('a:b').toString('base64')}`,
      'Bearer',
      `Token ${token}`,
      `Bearer ${token} extra`,
    ]) {
      const res = await t.app.inject({
        method: 'GET',
        url: '/v1/programs',
        headers: { authorization: header },
      })
      assertApiError(res, 401, 'invalid_access_token', 'authentication_error')
    }
  })

  test('the scheme name is case-insensitive', async () => {
    const token = await tenant.token()
    const res = await t.app.inject({
      method: 'GET',
      url: '/v1/programs',
      headers: { authorization: `bearer ${token}` },
    })
    assert.equal(res.statusCode, 200)
  })

  test('an expired token answers 401 invalid_access_token', async () => {
    const token = await tenant.token()
    t.clock.advance(901_000)
    try {
      assertApiError(
        await t.api(token, 'GET', '/v1/programs'),
        401,
        'invalid_access_token',
        'authentication_error',
      )
    } finally {
      t.clock.advance(-901_000)
    }
  })

  test('a valid token on an unknown /v1 path answers 404 not_found', async () => {
    assertApiError(
      await t.api(await tenant.token(), 'GET', '/v1/no_such_thing'),
      404,
      'not_found',
      'invalid_request_error',
    )
  })
})

describe('revocation', () => {
  test('revoking a client acts on the next request of every token, and the client can get no new token', async () => {
    const victim = await createTenant(t, { scopes: ['cardholders:read'] })
    const a = await victim.token()
    const b = await victim.token()
    assert.equal((await t.api(a, 'GET', '/v1/programs')).statusCode, 200)
    const revoked = await t.operator('POST', `/operator/v1/clients/${victim.clientId}/revoke`)
    assert.equal(revoked.status, 'revoked')
    assertApiError(
      await t.api(a, 'GET', '/v1/programs'),
      401,
      'invalid_access_token',
      'authentication_error',
    )
    assertApiError(
      await t.api(b, 'GET', SCOPED),
      401,
      'invalid_access_token',
      'authentication_error',
    )
    assertGenericRefusal(await tokenFor(t, victim))
  })

  test('revocation is final: the client cannot be changed back', async () => {
    const victim = await createTenant(t, { scopes: ['cardholders:read'] })
    await t.operator('POST', `/operator/v1/clients/${victim.clientId}/revoke`)
    const patch = await t.app.inject({
      method: 'PATCH',
      url: `/operator/v1/clients/${victim.clientId}`,
      headers: { authorization: 'Bearer op_test_operator_token' },
      payload: { scopes: ['cardholders:read'] },
    })
    assert.equal(patch.statusCode, 400)
    const again = await t.operator('POST', `/operator/v1/clients/${victim.clientId}/revoke`)
    assert.equal(again.status, 'revoked')
    assertGenericRefusal(await tokenFor(t, victim))
  })

  test("revoking one client leaves the organization's other clients working", async () => {
    const first = await createTenant(t, { scopes: ['cardholders:read'] })
    const second = await createTenant(t, {
      scopes: ['cardholders:read'],
      organizationId: first.organizationId,
    })
    const token = await second.token()
    await t.operator('POST', `/operator/v1/clients/${first.clientId}/revoke`)
    assert.equal((await t.api(token, 'GET', '/v1/programs')).statusCode, 200)
  })
})

describe('scopes', () => {
  test('a token without the route scope answers 403 insufficient_scope', async () => {
    const token = await tenant.token('accounts:read cardholders:write')
    assertApiError(await t.api(token, 'GET', SCOPED), 403, 'insufficient_scope', 'permission_error')
  })

  test('a token with the route scope passes and carries the caller context', async () => {
    const res = await t.api(await tenant.token('cardholders:read'), 'GET', SCOPED)
    assert.equal(res.statusCode, 200)
    assert.deepEqual(res.json(), {
      organization_id: tenant.organizationId,
      environment: 'sandbox',
      client_id: tenant.clientId,
      scopes: ['cardholders:read'],
    })
  })

  test('GET /v1/programs needs no scope: a client holding none can list programs', async () => {
    const bare = await createTenant(t, { scopes: [] })
    const minted = await tokenFor(t, bare)
    assert.equal(minted.statusCode, 200, minted.body)
    assert.equal(minted.json().scope, '')
    const res = await t.api(minted.json().access_token, 'GET', '/v1/programs')
    assert.equal(res.statusCode, 200)
    assert.equal(res.json().data.length, 2)
    assertApiError(
      await t.api(minted.json().access_token, 'GET', SCOPED),
      403,
      'insufficient_scope',
      'permission_error',
    )
  })

  test('changing a client scopes affects the next token only', async () => {
    const changing = await createTenant(t, { scopes: ['cardholders:read'] })
    const before = await changing.token()
    await t.operator('PATCH', `/operator/v1/clients/${changing.clientId}`, {
      scopes: ['accounts:read'],
    })
    assert.equal(
      (await t.api(before, 'GET', SCOPED)).statusCode,
      200,
      'the old token keeps the scopes it was issued with',
    )
    const after = await changing.token()
    assertApiError(await t.api(after, 'GET', SCOPED), 403, 'insufficient_scope', 'permission_error')
    assertOAuthError(
      await tokenFor(t, changing, { scope: 'cardholders:read' }),
      400,
      'invalid_scope',
    )
  })

  test('a real scoped route, when mounted, refuses a token without its scope', async (ctx) => {
    if (!t.app.hasRoute({ method: 'GET', url: '/v1/cardholders' }))
      return ctx.skip('cardholders module not mounted yet')
    const token = await tenant.token('accounts:read')
    assertApiError(
      await t.api(token, 'GET', '/v1/cardholders'),
      403,
      'insufficient_scope',
      'permission_error',
    )
  })
})

describe('ip_not_allowed', () => {
  test('the organization network policy gates /v1 by the last X-Forwarded-For entry, per request', async () => {
    const guarded = await createTenant(t, { scopes: ['cardholders:read'] })
    const token = await guarded.token()
    await t.operator('PUT', `/operator/v1/organizations/${guarded.organizationId}/network_policy`, {
      environment: 'sandbox',
      ip_allowlist: ['198.51.100.0/24'],
    })
    const spoofed = await t.api(token, 'GET', '/v1/programs', undefined, {
      'x-forwarded-for': '198.51.100.1, 203.0.113.50',
    })
    assertApiError(spoofed, 403, 'ip_not_allowed', 'permission_error')
    assert.equal(
      (
        await t.api(token, 'GET', '/v1/programs', undefined, {
          'x-forwarded-for': '203.0.113.50, 198.51.100.1',
        })
      ).statusCode,
      200,
    )
    assertApiError(
      await t.api(token, 'GET', '/v1/programs'),
      403,
      'ip_not_allowed',
      'permission_error',
    )
    // A proxy that appends the port is understood.
    assert.equal(
      (
        await t.api(token, 'GET', '/v1/programs', undefined, {
          'x-forwarded-for': '203.0.113.50, 198.51.100.1:4431',
        })
      ).statusCode,
      200,
    )
    await t.operator('PUT', `/operator/v1/organizations/${guarded.organizationId}/network_policy`, {
      environment: 'sandbox',
      ip_allowlist: [],
    })
    assert.equal((await t.api(token, 'GET', '/v1/programs')).statusCode, 200)
  })

  test("the client's allowlist is applied on top of the organization policy (only stricter)", async () => {
    const strict = await createTenant(t, {
      scopes: ['cardholders:read'],
      ipAllowlist: ['127.0.0.1', '198.51.100.7'],
    })
    await t.operator('PUT', `/operator/v1/organizations/${strict.organizationId}/network_policy`, {
      environment: 'sandbox',
      ip_allowlist: ['127.0.0.1', '198.51.100.0/24'],
    })
    const token = await strict.token()
    assert.equal(
      (await t.api(token, 'GET', '/v1/programs', undefined, { 'x-forwarded-for': '198.51.100.7' }))
        .statusCode,
      200,
    )
    assertApiError(
      await t.api(token, 'GET', '/v1/programs', undefined, { 'x-forwarded-for': '198.51.100.8' }),
      403,
      'ip_not_allowed',
      'permission_error',
    )
    // Inside the client list but outside the organization policy: still refused.
    await t.operator('PATCH', `/operator/v1/clients/${strict.clientId}`, {
      ip_allowlist: ['127.0.0.1', '192.0.2.10'],
    })
    assertApiError(
      await t.api(token, 'GET', '/v1/programs', undefined, { 'x-forwarded-for': '192.0.2.10' }),
      403,
      'ip_not_allowed',
      'permission_error',
    )
    await t.operator('PATCH', `/operator/v1/clients/${strict.clientId}`, { ip_allowlist: null })
    assert.equal(
      (await t.api(token, 'GET', '/v1/programs', undefined, { 'x-forwarded-for': '198.51.100.8' }))
        .statusCode,
      200,
    )
  })

  test('an IPv4-mapped IPv6 address matches an IPv4 allowlist', async () => {
    const mapped = await createTenant(t, {
      scopes: ['cardholders:read'],
      ipAllowlist: ['203.0.113.0/24'],
    })
    await t.operator('PUT', `/operator/v1/organizations/${mapped.organizationId}/network_policy`, {
      environment: 'sandbox',
      ip_allowlist: [],
    })
    const minted = await tokenFor(t, mapped, {}, { 'x-forwarded-for': '::ffff:203.0.113.4' })
    assert.equal(minted.statusCode, 200, minted.body)
    const res = await t.api(minted.json().access_token, 'GET', '/v1/programs', undefined, {
      'x-forwarded-for': '::ffff:203.0.113.4',
    })
    assert.equal(res.statusCode, 200)
  })
})
