import assert from 'node:assert/strict'
import { createPublicKey, generateKeyPairSync, randomUUID } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { compactDecrypt, SignJWT } from 'jose'
import {
  BASE_URL,
  createTenant,
  OPERATOR_TOKEN,
  requestToken,
  startTestApp,
  TOKEN_URL,
  type TestApp,
} from '../helpers/app.js'
import { SMALL_FACTOR_BOUND, smallPrimeFactor } from '../../src/lib/rsa-public-key.js'
import { tokenRequestBody } from '../../src/lib/client-assertion.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'

// RSA public keys an integrator supplies must have a modulus of at least 2048 bits and the exponent 65537:
// with e = 1 the "encryption" of card details is the plaintext, and a client "signature" anyone can forge.
let t: TestApp
let token: string
let cardId: string

const good = generateKeyPairSync('rsa', { modulusLength: 2048 })
const goodJwk = good.publicKey.export({ format: 'jwk' }) as Record<string, string>
/** The weak keys, each as a JWK and as PEM where one exists. */
const exponentOne = { ...goodJwk, e: 'AQ' } // e = 1: c = m
const exponentThree = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicExponent: 3,
}).publicKey
const short = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey

/** The good key with another modulus of the same length: `n` as base64url of exactly 256 bytes. */
function withModulus(n: bigint): { jwk: Record<string, string>; pem: string } {
  const jwk = {
    ...goodJwk,
    n: Buffer.from(n.toString(16).padStart(512, '0'), 'hex').toString('base64url'),
  }
  return {
    jwk,
    pem: createPublicKey({ key: jwk, format: 'jwk' })
      .export({ type: 'spki', format: 'pem' })
      .toString(),
  }
}
const goodModulus = BigInt(`0x${Buffer.from(goodJwk.n, 'base64url').toString('hex')}`)
// An even modulus made card details answer 500 and registered as a client key; a small factor gives the key away.
const evenModulus = withModulus(goodModulus + 1n)
/** A 2048-bit modulus p × q whose smallest prime factor is p (q has none below the bound). */
const byFactor = (p: bigint) => {
  let q = goodModulus / p
  if (q % 2n === 0n) q -= 1n
  while (smallPrimeFactor(q) !== null) q -= 2n
  return withModulus(p * q)
}
const factor3 = byFactor(3n)
const factor9973 = byFactor(9973n)

const weakKeys: [string, unknown, RegExp][] = [
  ['an even modulus (JWK)', evenModulus.jwk, /even modulus/],
  ['an even modulus (PEM)', evenModulus.pem, /even modulus/],
  ['a modulus divisible by 3 (JWK)', factor3.jwk, /modulus divisible by 3;/],
  ['a modulus divisible by 9973 (JWK)', factor9973.jwk, /modulus divisible by 9973;/],
  ['a modulus divisible by 9973 (PEM)', factor9973.pem, /modulus divisible by 9973;/],
  ['e = 1 (JWK)', exponentOne, /exponent 1;/],
  ['e = 3 (JWK)', exponentThree.export({ format: 'jwk' }), /exponent 3;/],
  ['e = 3 (PEM)', exponentThree.export({ type: 'spki', format: 'pem' }), /exponent 3;/],
  ['1024 bits (JWK)', short.export({ format: 'jwk' }), /1024 bits/],
  ['1024 bits (PEM)', short.export({ type: 'pkcs1', format: 'pem' }), /1024 bits/],
]

before(async () => {
  t = await startTestApp()
  const tenant = await createTenant(t)
  token = await tenant.token()
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  cardId = (await issuedCard(t, token, cardBody(holder.id, account.id))).id
})
after(() => t.close())

/** A client assertion signed RS256 with key id k1, valid for a minute from the test clock. */
function rs256Assertion(
  clientId: string,
  privateKey: Parameters<SignJWT['sign']>[0],
): Promise<string> {
  const now = Math.floor(t.clock.now().getTime() / 1000)
  return new SignJWT({ jti: randomUUID() })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer(clientId)
    .setSubject(clientId)
    .setAudience(TOKEN_URL)
    .setIssuedAt(now)
    .setExpirationTime(now + 60)
    .sign(privateKey)
}

function assertInvalidKey(
  res: { statusCode: number; body: string; headers: Record<string, unknown> },
  param: string,
  message: RegExp,
): void {
  assert.equal(res.statusCode, 400, res.body)
  const { error } = JSON.parse(res.body)
  assert.equal(error.code, 'invalid_public_key')
  assert.equal(error.type, 'invalid_request_error')
  assert.equal(error.param, param)
  assert.match(error.message, message)
  assert.equal(error.doc_url, `${BASE_URL}/docs/errors#invalid_public_key`)
  assert.equal(error.request_id, res.headers['svc-request-id'])
}

describe('card details', () => {
  for (const [name, key, message] of weakKeys) {
    test(`a caller key with ${name} is refused with invalid_public_key and no card data`, async () => {
      const res = await t.api(token, 'POST', `/v1/cards/${cardId}/details`, { public_key: key })
      assertInvalidKey(res, 'public_key', message)
      assert.ok(!res.body.includes('encrypted_details'))
    })
  }

  test('a 2048-bit key with e = 65537 still receives the details, readable with its private key', async () => {
    for (const publicKey of [goodJwk, good.publicKey.export({ type: 'spki', format: 'pem' })]) {
      const res = await t.api(token, 'POST', `/v1/cards/${cardId}/details`, {
        public_key: publicKey,
      })
      assert.equal(res.statusCode, 200, res.body)
      const { plaintext } = await compactDecrypt(res.json().encrypted_details, good.privateKey)
      assert.match(JSON.parse(new TextDecoder().decode(plaintext)).number, /^[0-9]{15,19}$/)
    }
  })
})

describe('OAuth client keys', () => {
  let orgId: string
  before(async () => {
    orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'RSA keys' })).id
  })

  const register = (jwk: unknown) =>
    t.app.inject({
      method: 'POST',
      url: '/operator/v1/clients',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      payload: {
        organization_id: orgId,
        environment: 'sandbox',
        label: 'rsa',
        scopes: ['cardholders:read'],
        jwks: { keys: [jwk] },
      },
    })

  for (const [name, key, message] of weakKeys.filter(([name]) => name.endsWith('(JWK)'))) {
    test(`registering a client key with ${name} is refused with invalid_public_key`, async () => {
      assertInvalidKey(
        await register({ ...(key as object), alg: 'RS256', kid: 'k1' }),
        'jwks.keys[0]',
        message,
      )
      assertInvalidKey(
        await t.app.inject({
          method: 'POST',
          url: '/operator/v1/clients',
          headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
          payload: {
            organization_id: orgId,
            environment: 'sandbox',
            label: 'rsa',
            scopes: ['cardholders:read'],
            jwks: {
              keys: [
                { ...goodJwk, kid: 'a' },
                { ...(key as object), kid: 'b' },
              ],
            },
          },
        }),
        'jwks.keys[1]',
        message,
      )
    })
  }

  test('a 2048-bit key with e = 65537 registers and obtains a token with RS256', async () => {
    const res = await register({ ...goodJwk, alg: 'RS256', kid: 'k1' })
    assert.equal(res.statusCode, 201, res.body)
    const clientId = res.json().id
    const issued = await requestToken(
      t,
      tokenRequestBody(await rs256Assertion(clientId, good.privateKey)),
    )
    assert.equal(issued.statusCode, 200, issued.body)
  })
})

describe('self-service OAuth client keys (/v1/oauth_clients)', () => {
  let admin: string
  before(async () => {
    admin = await (await createTenant(t, { scopes: ['clients:write', 'cardholders:read'] })).token()
  })

  for (const [name, key, message] of weakKeys.filter(([name]) => name.endsWith('(JWK)'))) {
    test(`registering or replacing a client key with ${name} is refused with invalid_public_key`, async () => {
      const jwks = { keys: [{ ...(key as object), alg: 'RS256', kid: 'k1' }] }
      assertInvalidKey(
        await t.api(admin, 'POST', '/v1/oauth_clients', {
          label: 'rsa',
          scopes: ['cardholders:read'],
          jwks,
        }),
        'jwks.keys[0]',
        message,
      )
      const made = await t.api(admin, 'POST', '/v1/oauth_clients', {
        label: 'rsa',
        scopes: ['cardholders:read'],
        jwks: { keys: [{ ...goodJwk, alg: 'RS256', kid: 'k1' }] },
      })
      assert.equal(made.statusCode, 201, made.body)
      assertInvalidKey(
        await t.api(admin, 'PATCH', `/v1/oauth_clients/${made.json().id}`, { jwks }),
        'jwks.keys[0]',
        message,
      )
    })
  }
})

describe('the small-factor check', () => {
  test(`finds every prime factor below ${SMALL_FACTOR_BOUND} and none above, fast (a 4096-bit modulus in under 5 ms)`, () => {
    assert.equal(smallPrimeFactor(2n ** 4095n + 2n), 2)
    assert.equal(smallPrimeFactor(9973n * 10_007n), 9973)
    assert.equal(smallPrimeFactor(10_007n * 10_009n), null)
    assert.equal(smallPrimeFactor(goodModulus), null)
    const big = BigInt(
      `0x${Buffer.from((generateKeyPairSync('rsa', { modulusLength: 4096 }).publicKey.export({ format: 'jwk' }) as { n: string }).n, 'base64url').toString('hex')}`,
    )
    const started = performance.now()
    for (let i = 0; i < 100; i++) assert.equal(smallPrimeFactor(big), null)
    const perCall = (performance.now() - started) / 100
    assert.ok(perCall < 5, `${perCall.toFixed(3)} ms per 4096-bit modulus`)
  })
})

describe('client keys registered before the rule', () => {
  test('a weak RSA key already stored no longer proves an assertion: the token endpoint refuses it', async () => {
    const good = await t.app.inject({
      method: 'POST',
      url: '/operator/v1/clients',
      headers: { authorization: `Bearer ${OPERATOR_TOKEN}` },
      payload: {
        organization_id: (await createTenant(t)).organizationId,
        environment: 'sandbox',
        label: 'legacy',
        scopes: ['cardholders:read'],
        jwks: { keys: [{ ...goodJwk, alg: 'RS256', kid: 'k1' }] },
      },
    })
    assert.equal(good.statusCode, 201, good.body)
    const clientId = good.json().id
    // As a client registered before keys were checked would have it: an e = 3 key in the stored JWK Set.
    const weak = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 3 })
    const weakJwk = { ...weak.publicKey.export({ format: 'jwk' }), alg: 'RS256', kid: 'k1' }
    await t.deps.db
      .updateTable('oauth_clients')
      .set({ jwks: JSON.stringify({ keys: [weakJwk] }) as never })
      .where('id', '=', clientId)
      .execute()
    const refused = await requestToken(
      t,
      tokenRequestBody(await rs256Assertion(clientId, weak.privateKey)),
    )
    assert.equal(refused.statusCode, 401, refused.body)
    assert.equal(refused.json().error, 'invalid_client')
  })
})
