import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { exportJWK, generateKeyPair } from 'jose'
import {
  createTenant,
  newKeyPair,
  requestToken,
  startTestApp,
  TOKEN_URL,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import {
  ASSERTION_TYPE,
  assertGenericRefusal,
  assertOAuthError,
  assertionFor,
  forgedAssertion,
  tokenFor,
  tokenForm,
} from './support.js'

let t: TestApp
let tenant: TestClient

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t, {
    scopes: ['cardholders:read', 'cardholders:write', 'accounts:read', 'authentications:read'],
  })
})
after(() => t.close())

describe('invalid_client: refusals before the signature is proven', () => {
  test('an unknown client answers 401 invalid_client with the generic description', async () => {
    assertGenericRefusal(
      await tokenFor(t, {
        clientId: 'oc_01UNKNOWNCLIENT000000000000',
        privateJwk: tenant.privateJwk,
      }),
    )
  })

  test('a revoked client answers 401 invalid_client', async () => {
    const victim = await createTenant(t)
    assert.equal((await tokenFor(t, victim)).statusCode, 200)
    await t.operator('POST', `/operator/v1/clients/${victim.clientId}/revoke`)
    assertGenericRefusal(await tokenFor(t, victim))
  })

  test('an assertion signed by a key the client never registered answers invalid_client', async () => {
    const stranger = await newKeyPair('ES256', 'k1')
    assertGenericRefusal(
      await tokenFor(t, { clientId: tenant.clientId, privateJwk: stranger.privateJwk }),
    )
  })

  test('a tampered payload (signature no longer matches) answers invalid_client', async () => {
    const [h, , s] = (await assertionFor(t, tenant)).split('.')
    const other = (await assertionFor(t, tenant, { claims: { jti: 'tampered' } })).split('.')[1]
    assertGenericRefusal(await requestToken(t, tokenForm(`${h}.${other}.${s}`)))
  })

  for (const alg of ['none', 'HS256', 'HS512', 'ES384', 'PS256'] as const) {
    test(`alg ${alg} is refused with invalid_client (only ES256 and RS256 are accepted)`, async () => {
      // HS256 keyed with the public x coordinate: the classic key-confusion attack.
      const assertion = await forgedAssertion(tenant.clientId, alg, String(tenant.publicJwk.x))
      assertGenericRefusal(await requestToken(t, tokenForm(assertion)))
    })
  }

  test('an assertion signed RS256 against an EC key registration answers invalid_client', async () => {
    const rsa = await newKeyPair('RS256', 'k1')
    assertGenericRefusal(
      await tokenFor(t, { clientId: tenant.clientId, privateJwk: rsa.privateJwk }),
    )
  })

  test('a kid that matches no registered key answers invalid_client', async () => {
    const res = await requestToken(
      t,
      tokenForm(await assertionFor(t, tenant, { kid: 'no-such-kid' })),
    )
    assertGenericRefusal(res)
  })

  test('iss and sub must both name the client', async () => {
    assertGenericRefusal(
      await requestToken(
        t,
        tokenForm(await assertionFor(t, tenant, { claims: { sub: 'oc_someone_else' } })),
      ),
    )
    assertGenericRefusal(
      await requestToken(
        t,
        tokenForm(await assertionFor(t, tenant, { claims: { iss: undefined } })),
      ),
    )
  })

  test('a NUL character in iss and sub is an unknown client, in a jti a malformed assertion (never a 500)', async () => {
    assertGenericRefusal(
      await requestToken(
        t,
        tokenForm(await assertionFor(t, tenant, { claims: { iss: 'x\u0000', sub: 'x\u0000' } })),
      ),
    )
    assertOAuthError(
      await requestToken(
        t,
        tokenForm(await assertionFor(t, tenant, { claims: { jti: 'a\u0000b' } })),
      ),
      400,
      'invalid_request',
    )
  })

  test('every refusal before the signature is proven carries one and the same description', async () => {
    const stranger = await newKeyPair('ES256', 'k1')
    const responses = [
      await tokenFor(t, { clientId: 'oc_nobody', privateJwk: tenant.privateJwk }),
      await tokenFor(t, { clientId: tenant.clientId, privateJwk: stranger.privateJwk }),
      await requestToken(t, tokenForm(await assertionFor(t, tenant, { kid: 'nope' }))),
      await requestToken(t, tokenForm(await forgedAssertion(tenant.clientId, 'none'))),
      await requestToken(t, tokenForm(await forgedAssertion(tenant.clientId, 'HS256'))),
    ]
    const descriptions = new Set(responses.map((r) => r.json().error_description))
    assert.equal(descriptions.size, 1, [...descriptions].join(' | '))
    assert.ok(responses.every((r) => r.statusCode === 401))
  })
})

describe('invalid_client: audience compared exactly', () => {
  for (const aud of [
    `${TOKEN_URL}/`,
    TOKEN_URL.replace('http://', 'https://'),
    TOKEN_URL.replace('svc.test', 'svc.test:8443'),
    TOKEN_URL.replace('svc.test', 'svc.test:80'),
    'http://svc.test',
    TOKEN_URL.toUpperCase(),
  ]) {
    test(`aud ${aud} answers 401 invalid_client`, async () => {
      assertOAuthError(
        await requestToken(t, tokenForm(await assertionFor(t, tenant, { audience: aud }))),
        401,
        'invalid_client',
      )
    })
  }

  test('aud as an array containing the exact token endpoint URL is accepted', async () => {
    const res = await requestToken(
      t,
      tokenForm(await assertionFor(t, tenant, { claims: { aud: [TOKEN_URL] } })),
    )
    assert.equal(res.statusCode, 200, res.body)
  })
})

describe('invalid_request, unsupported_grant_type', () => {
  test('a malformed JWT answers 400 invalid_request', async () => {
    for (const junk of ['not-a-jwt', 'a.b.c', 'eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln', '..']) {
      assertOAuthError(await requestToken(t, tokenForm(junk)), 400, 'invalid_request')
    }
  })

  for (const field of ['grant_type', 'client_assertion_type', 'client_assertion']) {
    test(`a missing ${field} answers 400 invalid_request`, async () => {
      assertOAuthError(
        await requestToken(t, tokenForm(await assertionFor(t, tenant), { [field]: undefined })),
        400,
        'invalid_request',
      )
    })
  }

  test('a wrong client_assertion_type answers 400 invalid_request', async () => {
    const res = await requestToken(
      t,
      tokenForm(await assertionFor(t, tenant), {
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:saml2-bearer',
      }),
    )
    assertOAuthError(res, 400, 'invalid_request')
  })

  test('a JSON body answers 400 invalid_request in the flat shape', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({
        grant_type: 'client_credentials',
        client_assertion_type: ASSERTION_TYPE,
        client_assertion: await assertionFor(t, tenant),
      }),
    })
    assertOAuthError(res, 400, 'invalid_request')
  })

  test('an empty request answers 400 invalid_request', async () => {
    assertOAuthError(
      await t.app.inject({ method: 'POST', url: '/oauth/token' }),
      400,
      'invalid_request',
    )
  })

  test('a repeated form field answers 400 invalid_request', async () => {
    const form = `${tokenForm(await assertionFor(t, tenant))}&grant_type=client_credentials`
    assertOAuthError(await requestToken(t, form), 400, 'invalid_request')
  })

  for (const grant of [
    'authorization_code',
    'password',
    'refresh_token',
    'urn:ietf:params:oauth:grant-type:jwt-bearer',
  ]) {
    test(`grant_type ${grant} answers 400 unsupported_grant_type`, async () => {
      assertOAuthError(
        await requestToken(t, tokenForm(await assertionFor(t, tenant), { grant_type: grant })),
        400,
        'unsupported_grant_type',
      )
    })
  }
})

describe('invalid_scope and invalid_grant', () => {
  test('a scope that does not exist answers 400 invalid_scope', async () => {
    assertOAuthError(
      await tokenFor(t, tenant, { scope: 'cardholders:read superpowers' }),
      400,
      'invalid_scope',
    )
  })

  test('a real scope the client does not hold answers 400 invalid_scope and grants nothing', async () => {
    assertOAuthError(
      await tokenFor(t, tenant, { scope: 'cardholders:read cards:write' }),
      400,
      'invalid_scope',
    )
  })

  test('authentications:read is not issued before the three_d_secure release, even to a client holding it', async () => {
    assertOAuthError(
      await tokenFor(t, tenant, { scope: 'authentications:read' }),
      400,
      'invalid_scope',
    )
    const all = await tokenFor(t, tenant)
    assert.equal(all.statusCode, 200)
    assert.deepEqual(all.json().scope.split(' ').sort(), [
      'accounts:read',
      'cardholders:read',
      'cardholders:write',
    ])
  })

  test('a jti redeemed once answers 400 invalid_grant the second time', async () => {
    const form = tokenForm(await assertionFor(t, tenant))
    assert.equal((await requestToken(t, form)).statusCode, 200)
    assertOAuthError(await requestToken(t, form), 400, 'invalid_grant')
  })

  test('a refused scope does not spend the assertion', async () => {
    const assertion = await assertionFor(t, tenant)
    assertOAuthError(
      await requestToken(t, tokenForm(assertion, { scope: 'cards:write' })),
      400,
      'invalid_scope',
    )
    assert.equal(
      (await requestToken(t, tokenForm(assertion, { scope: 'cardholders:read' }))).statusCode,
      200,
    )
  })

  test('two concurrent redemptions of one jti: exactly one 200, the others invalid_grant', async () => {
    const form = tokenForm(await assertionFor(t, tenant))
    const results = await Promise.all(Array.from({ length: 6 }, () => requestToken(t, form)))
    const statuses = results.map((r) => r.statusCode).sort()
    assert.deepEqual(statuses, [200, 400, 400, 400, 400, 400])
    for (const r of results.filter((x) => x.statusCode === 400))
      assertOAuthError(r, 400, 'invalid_grant')
  })

  test('the same jti used by two different clients is redeemed once by each', async () => {
    const other = await createTenant(t)
    const jti = 'shared-jti-value'
    assert.equal(
      (await requestToken(t, tokenForm(await assertionFor(t, tenant, { claims: { jti } }))))
        .statusCode,
      200,
    )
    assert.equal(
      (await requestToken(t, tokenForm(await assertionFor(t, other, { claims: { jti } }))))
        .statusCode,
      200,
    )
  })
})

describe('the client_id form field', () => {
  test('client_id equal to the assertion iss is accepted', async () => {
    assert.equal((await tokenFor(t, tenant, { client_id: tenant.clientId })).statusCode, 200)
  })

  test('client_id different from the assertion iss answers invalid_client', async () => {
    const other = await createTenant(t)
    assertGenericRefusal(await tokenFor(t, tenant, { client_id: other.clientId }))
  })
})

describe('key types', () => {
  test('a client registered with an RSA 2048 key obtains a token with RS256', async () => {
    const org = await t.operator('POST', '/operator/v1/organizations', { name: 'RSA org' })
    const { publicKey, privateKey } = await generateKeyPair('RS256', {
      extractable: true,
      modulusLength: 2048,
    })
    const client = await t.operator('POST', '/operator/v1/clients', {
      organization_id: org.id,
      environment: 'sandbox',
      label: 'rsa',
      scopes: ['cardholders:read'],
      jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: 'rsa-1' }] },
    })
    const res = await tokenFor(t, {
      clientId: client.id,
      privateJwk: { ...(await exportJWK(privateKey)), kid: 'rsa-1' },
    })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().scope, 'cardholders:read')
  })
})
