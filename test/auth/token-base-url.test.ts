import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import {
  createTenant,
  requestToken,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import { assertOAuthError, assertionFor, tokenForm } from './support.js'

// A deployment started without BASE_URL (the `npm start` default): its own address is only a guess. That is the
// embedded database only (with DATABASE_URL, BASE_URL is required), so this file runs on PGlite in every suite.
let t: TestApp
let tenant: TestClient

before(async () => {
  t = await startTestApp({ env: { BASE_URL: '', DATABASE_URL: '', PORT: '8201' } })
  tenant = await createTenant(t)
})
after(() => t.close())

async function tokenWithAud(aud: string, host: string) {
  return requestToken(t, tokenForm(await assertionFor(t, tenant, { audience: aud })), { host })
}

test('without BASE_URL the guessed address http://localhost:$PORT/oauth/token is the audience', async () => {
  const res = await tokenWithAud('http://localhost:8201/oauth/token', '127.0.0.1:8201')
  assert.equal(res.statusCode, 200, res.body)
})

test('without BASE_URL the token endpoint URL as the caller reached it is accepted too', async () => {
  const res = await tokenWithAud('http://127.0.0.1:8201/oauth/token', '127.0.0.1:8201')
  assert.equal(res.statusCode, 200, res.body)
  const meta = (
    await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
  ).json()
  assert.equal(meta.token_endpoint, 'http://localhost:8201/oauth/token')
})

test('without BASE_URL the comparison stays exact: another port, scheme, host or a trailing slash is invalid_client naming the accepted URLs', async () => {
  for (const aud of [
    'http://127.0.0.1:9999/oauth/token',
    'https://127.0.0.1:8201/oauth/token',
    'http://127.0.0.1:8201/oauth/token/',
    'http://evil.example:8201/oauth/token',
  ]) {
    const description = assertOAuthError(
      await tokenWithAud(aud, '127.0.0.1:8201'),
      401,
      'invalid_client',
    )
    assert.equal(
      description,
      `aud must be exactly http://localhost:8201/oauth/token or http://127.0.0.1:8201/oauth/token (the token endpoint's URL; it is ${JSON.stringify(aud)}).`,
    )
  }
})
