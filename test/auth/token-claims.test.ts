import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  BASE_URL,
  createTenant,
  newKeyPair,
  requestToken,
  startTestApp,
  TOKEN_URL,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import {
  assertGenericRefusal,
  assertOAuthError,
  assertionFor,
  nowSeconds,
  tokenFor,
  tokenForm,
} from './support.js'

let t: TestApp
let tenant: TestClient

before(async () => {
  // app.inject connects from 127.0.0.1: named as the proxy, so a test's X-Forwarded-For stands for the caller's address.
  t = await startTestApp({ env: { TRUSTED_PROXIES: '127.0.0.1' } })
  tenant = await createTenant(t, {
    scopes: ['cardholders:read', 'cardholders:write', 'accounts:read'],
  })
})
after(() => t.close())

/** A token request whose assertion carries exactly these time claims (relative to the app clock). */
async function withTimes(times: {
  iat?: number
  exp?: number
  nbf?: number
}): Promise<Awaited<ReturnType<typeof requestToken>>> {
  const now = nowSeconds(t)
  const claims: Record<string, unknown> = {
    iat: now + (times.iat ?? 0),
    exp: now + (times.exp ?? 60),
  }
  if (times.nbf !== undefined) claims.nbf = now + times.nbf
  return requestToken(t, tokenForm(await assertionFor(t, tenant, { claims })))
}

describe('assertion lifetime and clock tolerance', () => {
  test('an assertion expired beyond the 60 s tolerance answers 401 invalid_client', async () => {
    assertOAuthError(await withTimes({ iat: -200, exp: -61 }), 401, 'invalid_client')
  })

  test('an assertion expired by less than the 60 s tolerance is still accepted', async () => {
    assert.equal((await withTimes({ iat: -100, exp: -30 })).statusCode, 200)
  })

  test('exp more than five minutes (plus tolerance) ahead answers 401 invalid_client', async () => {
    assertOAuthError(await withTimes({ exp: 300 + 65 }), 401, 'invalid_client') // a few seconds past the bound: the signer's second may tick before the check
    assertOAuthError(await withTimes({ exp: 3600 }), 401, 'invalid_client')
  })

  test('exp five minutes ahead, or just over within the tolerance, is accepted', async () => {
    assert.equal((await withTimes({ exp: 300 })).statusCode, 200)
    assert.equal((await withTimes({ exp: 330 })).statusCode, 200)
  })

  test('iat in the future beyond the tolerance answers 401 invalid_client', async () => {
    assertOAuthError(await withTimes({ iat: 120, exp: 180 }), 401, 'invalid_client')
  })

  test('iat slightly ahead (a signing clock 30 s fast) is accepted', async () => {
    assert.equal((await withTimes({ iat: 30, exp: 90 })).statusCode, 200)
  })

  test('once the signature is proven, a clock refusal names the check, the claim and the service clock', async () => {
    const now = nowSeconds(t)
    for (const [times, pattern] of [
      [
        { iat: 120, exp: 180 },
        /^iat is in the future: it is \S+ and the service's clock reads \S+ \(60 s of skew are tolerated\)\.$/,
      ],
      [
        { iat: -200, exp: -100 },
        /^exp is in the past: the assertion expired at \S+ and the service's clock reads \S+; sign a new one\.$/,
      ],
      [
        { exp: 600 },
        /^exp is more than 5 minutes ahead: it is \S+ and the service's clock reads \S+; an assertion lives at most 300 s\.$/,
      ],
      [
        { iat: -400, exp: 10 },
        /^iat is more than 5 minutes in the past: it is \S+ and the service's clock reads \S+; sign a new assertion\.$/,
      ],
      [
        { nbf: 120, exp: 180 },
        /^nbf is in the future: it is \S+ and the service's clock reads \S+ \(60 s of skew are tolerated\)\.$/,
      ],
    ] as const) {
      const description = assertOAuthError(await withTimes(times), 401, 'invalid_client')
      assert.match(description, pattern)
      // The service's clock it names is within a few seconds of the test's.
      const clock = Date.parse(/the service's clock reads (\S+?)[ ;]/.exec(description)![1]) / 1000
      assert.ok(clock >= now && clock <= now + 5, description)
    }
  })

  test('once the signature is proven, a missing exp or iat is named', async () => {
    assert.equal(
      assertOAuthError(
        await requestToken(
          t,
          tokenForm(await assertionFor(t, tenant, { claims: { exp: undefined } })),
        ),
        401,
        'invalid_client',
      ),
      'exp is required: a number of seconds since the epoch, at most 5 minutes ahead.',
    )
    assert.equal(
      assertOAuthError(
        await requestToken(
          t,
          tokenForm(await assertionFor(t, tenant, { claims: { iat: undefined } })),
        ),
        401,
        'invalid_client',
      ),
      'iat is required: a number of seconds since the epoch, the time the assertion was signed.',
    )
  })

  test('a wrong aud signed by the client names the exact token endpoint URL expected', async () => {
    const res = await requestToken(
      t,
      tokenForm(await assertionFor(t, tenant, { audience: BASE_URL })),
    )
    assert.equal(
      assertOAuthError(res, 401, 'invalid_client'),
      `aud must be exactly ${TOKEN_URL} (the token endpoint's URL; it is ${JSON.stringify(BASE_URL)}).`,
    )
  })

  test('before the signature is proven nothing is named: a wrong aud signed by another key stays generic', async () => {
    const stranger = await newKeyPair()
    const res = await requestToken(
      t,
      tokenForm(
        await assertionFor(t, tenant, { privateJwk: stranger.privateJwk, audience: BASE_URL }),
      ),
    )
    assertGenericRefusal(res)
  })

  test('nbf (as off-the-shelf clients send it) is accepted; nbf more than 60 s ahead is refused', async () => {
    assert.equal((await withTimes({ nbf: 0 })).statusCode, 200)
    assert.equal((await withTimes({ nbf: 30 })).statusCode, 200)
    assertOAuthError(await withTimes({ nbf: 120, exp: 180 }), 401, 'invalid_client')
  })

  test('an assertion without exp answers invalid_client', async () => {
    assertOAuthError(
      await requestToken(
        t,
        tokenForm(await assertionFor(t, tenant, { claims: { exp: undefined } })),
      ),
      401,
      'invalid_client',
    )
  })

  test('an assertion without jti answers 400 invalid_request', async () => {
    assertOAuthError(
      await requestToken(
        t,
        tokenForm(await assertionFor(t, tenant, { claims: { jti: undefined } })),
      ),
      400,
      'invalid_request',
    )
  })

  test('a redeemed jti stays refused until its assertion has expired', async () => {
    const now = nowSeconds(t)
    const form = tokenForm(
      await assertionFor(t, tenant, { claims: { jti: 'remembered', iat: now, exp: now + 120 } }),
    )
    assert.equal((await requestToken(t, form)).statusCode, 200)
    t.clock.advance(150_000)
    try {
      assertOAuthError(await requestToken(t, form), 400, 'invalid_grant')
    } finally {
      t.clock.advance(-150_000)
    }
  })

  test('a jti can be used again in a fresh assertion once the first one has expired', async () => {
    const jti = 'recycled-jti'
    assert.equal(
      (await requestToken(t, tokenForm(await assertionFor(t, tenant, { claims: { jti } }))))
        .statusCode,
      200,
    )
    t.clock.advance(10 * 60_000)
    try {
      assert.equal(
        (await requestToken(t, tokenForm(await assertionFor(t, tenant, { claims: { jti } }))))
          .statusCode,
        200,
      )
    } finally {
      t.clock.advance(-10 * 60_000)
    }
  })
})

describe('kid rules', () => {
  let multi: TestClient & { second: Awaited<ReturnType<typeof newKeyPair>> }

  before(async () => {
    const base = await createTenant(t, { scopes: ['cardholders:read'] })
    const second = await newKeyPair('ES256', 'k2')
    await t.operator('PATCH', `/operator/v1/clients/${base.clientId}`, {
      jwks: { keys: [base.publicJwk, second.publicJwk] },
    })
    multi = { ...base, second }
  })

  test('with a kid, the named key verifies the assertion', async () => {
    assert.equal(
      (await tokenFor(t, { clientId: multi.clientId, privateJwk: multi.second.privateJwk }))
        .statusCode,
      200,
    )
  })

  test('with a kid, only that key is tried: a signature by the other registered key is refused', async () => {
    const res = await requestToken(
      t,
      tokenForm(await assertionFor(t, multi, { privateJwk: multi.second.privateJwk, kid: 'k1' })),
    )
    assertGenericRefusal(res)
  })

  test('without a kid, every registered key is tried', async () => {
    const res = await requestToken(
      t,
      tokenForm(await assertionFor(t, multi, { privateJwk: multi.second.privateJwk, kid: null })),
    )
    assert.equal(res.statusCode, 200, res.body)
  })

  test('key rotation: after the old key is removed, an assertion signed with it answers invalid_client; its tokens stay valid', async () => {
    const oldToken = (await tokenFor(t, multi)).json().access_token
    await t.operator('PATCH', `/operator/v1/clients/${multi.clientId}`, {
      jwks: { keys: [multi.second.publicJwk] },
    })
    assertGenericRefusal(await tokenFor(t, multi))
    assertGenericRefusal(
      await requestToken(t, tokenForm(await assertionFor(t, multi, { kid: null }))),
    )
    assert.equal(
      (await tokenFor(t, { clientId: multi.clientId, privateJwk: multi.second.privateJwk }))
        .statusCode,
      200,
    )
    assert.equal((await t.api(oldToken, 'GET', '/v1/programs')).statusCode, 200)
  })
})

describe('the token response', () => {
  test('a sandbox token is at_test_, Bearer, 900 s, with the granted scopes and Cache-Control: no-store', async () => {
    const res = await tokenFor(t, tenant, { scope: 'cardholders:read accounts:read' })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['cache-control'], 'no-store')
    assert.match(res.headers['content-type'] as string, /^application\/json/)
    const body = res.json()
    assert.match(body.access_token, /^at_test_[0-9A-Za-z]{40,}$/)
    assert.equal(body.token_type, 'Bearer')
    assert.equal(body.expires_in, 900)
    assert.equal(body.scope, 'cardholders:read accounts:read')
    assert.equal(body.refresh_token, undefined)
  })

  test('omitting scope grants every scope the client holds', async () => {
    const body = (await tokenFor(t, tenant)).json()
    assert.deepEqual(body.scope.split(' ').sort(), [
      'accounts:read',
      'cardholders:read',
      'cardholders:write',
    ])
  })

  test('a repeated scope is granted once', async () => {
    assert.equal(
      (await tokenFor(t, tenant, { scope: 'cardholders:read cardholders:read' })).json().scope,
      'cardholders:read',
    )
  })

  test('a production client receives an at_live_ token', async () => {
    const live = await createTenant(t, { environment: 'production', scopes: ['cardholders:read'] })
    const body = (await tokenFor(t, live)).json()
    assert.match(body.access_token, /^at_live_/)
    assert.equal(
      (await t.api(body.access_token, 'GET', '/v1/programs')).json().data[0].environment,
      'production',
    )
  })

  test('a client can hold several live tokens at once', async () => {
    const a = (await tokenFor(t, tenant)).json().access_token
    const b = (await tokenFor(t, tenant)).json().access_token
    assert.notEqual(a, b)
    assert.equal((await t.api(a, 'GET', '/v1/programs')).statusCode, 200)
    assert.equal((await t.api(b, 'GET', '/v1/programs')).statusCode, 200)
  })

  test('tokens are stored hashed: the database never holds the token text', async () => {
    const token = (await tokenFor(t, tenant)).json().access_token
    const rows = await t.deps.db.selectFrom('access_tokens').select('token_hash').execute()
    assert.ok(rows.length > 0)
    assert.ok(rows.every((r) => !r.token_hash.includes(token) && r.token_hash.length === 64))
  })

  test('a token answers invalid_access_token once its 900 s are over', async () => {
    const token = (await tokenFor(t, tenant)).json().access_token
    t.clock.advance(899_000)
    try {
      assert.equal((await t.api(token, 'GET', '/v1/programs')).statusCode, 200)
      t.clock.advance(2_000)
      assert.equal(
        (await t.api(token, 'GET', '/v1/programs')).json().error.code,
        'invalid_access_token',
      )
    } finally {
      t.clock.advance(-901_000)
    }
  })
})

describe('token endpoint and network policy', () => {
  test('an address outside the organization network policy answers invalid_client; the address is the last X-Forwarded-For entry', async () => {
    const tenantNp = await createTenant(t)
    await t.operator(
      'PUT',
      `/operator/v1/organizations/${tenantNp.organizationId}/network_policy`,
      { environment: 'sandbox', ip_allowlist: ['203.0.113.0/24'] },
    )
    assertGenericRefusal(
      await tokenFor(t, tenantNp, {}, { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' }),
    )
    assert.equal(
      (await tokenFor(t, tenantNp, {}, { 'x-forwarded-for': '198.51.100.7, 203.0.113.9' }))
        .statusCode,
      200,
    )
    // The policy of the other environment does not apply.
    await t.operator(
      'PUT',
      `/operator/v1/organizations/${tenantNp.organizationId}/network_policy`,
      { environment: 'production', ip_allowlist: ['192.0.2.1'] },
    )
    assert.equal(
      (await tokenFor(t, tenantNp, {}, { 'x-forwarded-for': '203.0.113.200' })).statusCode,
      200,
    )
    // An empty list lifts the restriction.
    await t.operator(
      'PUT',
      `/operator/v1/organizations/${tenantNp.organizationId}/network_policy`,
      { environment: 'sandbox', ip_allowlist: [] },
    )
    assert.equal(
      (await tokenFor(t, tenantNp, {}, { 'x-forwarded-for': '198.51.100.7' })).statusCode,
      200,
    )
  })

  test("an address outside the client's allowlist answers invalid_client, even inside the organization policy", async () => {
    const tenantIp = await createTenant(t, { ipAllowlist: ['203.0.113.5', '2001:db8::/32'] })
    await t.operator(
      'PUT',
      `/operator/v1/organizations/${tenantIp.organizationId}/network_policy`,
      { environment: 'sandbox', ip_allowlist: ['203.0.113.0/24', '2001:db8::/32'] },
    )
    assertGenericRefusal(await tokenFor(t, tenantIp, {}, { 'x-forwarded-for': '203.0.113.6' }))
    assert.equal(
      (await tokenFor(t, tenantIp, {}, { 'x-forwarded-for': '203.0.113.5' })).statusCode,
      200,
    )
    assert.equal(
      (await tokenFor(t, tenantIp, {}, { 'x-forwarded-for': '2001:db8::1' })).statusCode,
      200,
    )
    // Without X-Forwarded-For the socket address decides (127.0.0.1 under inject).
    assertGenericRefusal(await tokenFor(t, tenantIp))
  })
})

describe('authorization server metadata', () => {
  test('GET /.well-known/oauth-authorization-server publishes the RFC 8414 fields', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/.well-known/oauth-authorization-server',
    })
    assert.equal(res.statusCode, 200)
    const meta = res.json()
    assert.equal(meta.issuer, BASE_URL)
    assert.equal(meta.token_endpoint, TOKEN_URL)
    assert.deepEqual(meta.grant_types_supported, ['client_credentials'])
    assert.deepEqual(meta.token_endpoint_auth_methods_supported, ['private_key_jwt'])
    assert.deepEqual([...meta.token_endpoint_auth_signing_alg_values_supported].sort(), [
      'ES256',
      'RS256',
    ])
    assert.ok(meta.scopes_supported.includes('cardholders:read'))
    assert.ok(meta.scopes_supported.includes('esim:write'))
    assert.ok(
      !meta.scopes_supported.includes('authentications:read'),
      'release-gated scopes are not advertised',
    )
  })
})
