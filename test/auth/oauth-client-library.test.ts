import assert from 'node:assert/strict'
import { createServer } from 'node:net'
import { after, before, test } from 'node:test'
import { exportJWK } from 'jose'
import * as oauth from 'oauth4webapi'
import { startTestApp, type TestApp } from '../helpers/app.js'

// An off-the-shelf OAuth client (oauth4webapi) against the service on a real port.
let t: TestApp
let baseUrl: string
let clientId: string
let privateKey: CryptoKey

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

before(async () => {
  const port = await freePort()
  baseUrl = `http://127.0.0.1:${port}`
  t = await startTestApp({ env: { BASE_URL: baseUrl } })
  await t.app.listen({ port, host: '127.0.0.1' })
  const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, [
    'sign',
    'verify',
  ])
  privateKey = keys.privateKey
  const org = await t.operator('POST', '/operator/v1/organizations', { name: 'Library org' })
  await t.operator('POST', '/operator/v1/programs', {
    organization_id: org.id,
    environment: 'sandbox',
    name: 'Full',
    processor: 'sim_full',
    currencies: ['USD'],
  })
  const client = await t.operator('POST', '/operator/v1/clients', {
    organization_id: org.id,
    environment: 'sandbox',
    label: 'oauth4webapi',
    scopes: ['cardholders:read', 'accounts:read'],
    jwks: { keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'lib-1', alg: 'ES256' }] },
  })
  clientId = client.id
})
after(() => t.close())

/** Discovers the server the way the library intends (RFC 8414 metadata). */
async function discover(): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(baseUrl)
  const res = await oauth.discoveryRequest(issuer, {
    algorithm: 'oauth2',
    [oauth.allowInsecureRequests]: true,
  })
  return oauth.processDiscoveryResponse(issuer, res)
}

test('oauth4webapi obtains a token with private_key_jwt once aud is set to the token endpoint URL', async () => {
  const as = await discover()
  const client: oauth.Client = { client_id: clientId }
  // The library's default aud is the issuer; this service wants the exact token endpoint URL.
  const clientAuth = oauth.PrivateKeyJwt(
    { key: privateKey, kid: 'lib-1' },
    {
      [oauth.modifyAssertion]: (_header, payload) => {
        payload.aud = as.token_endpoint
      },
    },
  )
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    clientAuth,
    { scope: 'cardholders:read' },
    { [oauth.allowInsecureRequests]: true },
  )
  const result = await oauth.processClientCredentialsResponse(as, client, response)
  assert.match(result.access_token, /^at_test_/)
  assert.equal(result.token_type, 'bearer')
  assert.equal(result.expires_in, 900)
  assert.equal(result.scope, 'cardholders:read')

  const programs = await fetch(`${baseUrl}/v1/programs`, {
    headers: { authorization: `Bearer ${result.access_token}` },
  })
  assert.equal(programs.status, 200)
  assert.equal((await programs.json()).data.length, 1)
})

test("with the library's default aud (the issuer) the request answers 401 invalid_client", async () => {
  const as = await discover()
  const client: oauth.Client = { client_id: clientId }
  const response = await oauth.clientCredentialsGrantRequest(
    as,
    client,
    oauth.PrivateKeyJwt({ key: privateKey, kid: 'lib-1' }),
    {},
    { [oauth.allowInsecureRequests]: true },
  )
  await assert.rejects(
    oauth.processClientCredentialsResponse(as, client, response),
    (err: unknown) => {
      assert.ok(err instanceof oauth.ResponseBodyError)
      assert.equal(err.status, 401)
      assert.equal(err.error, 'invalid_client')
      return true
    },
  )
})

test('the token endpoint answers a real HTTP client with Cache-Control: no-store on success and refusal', async () => {
  const ok = await fetch(`${baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
    body: 'grant_type=password',
  })
  assert.equal(ok.status, 400)
  assert.equal(ok.headers.get('cache-control'), 'no-store')
  assert.deepEqual(await ok.json(), {
    error: 'unsupported_grant_type',
    error_description: 'Only client_credentials is supported.',
  })
})
