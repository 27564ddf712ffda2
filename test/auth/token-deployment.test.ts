import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sha256Hex } from '../../src/lib/crypto.js'
import { insertAccessToken } from '../../src/modules/oauth/repo.js'
import { createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import { assertGenericRefusal, tokenFor } from './support.js'

// A sandbox-only deployment with the 3-D Secure release switched on.
let t: TestApp

before(async () => {
  t = await startTestApp({ env: { SVC_ENVIRONMENTS: 'sandbox', SVC_RELEASES: 'three_d_secure' } })
})
after(() => t.close())

test('a production client asking a sandbox-only deployment for a token answers 401 invalid_client', async () => {
  const live = await createTenant(t, { environment: 'production' })
  assertGenericRefusal(await tokenFor(t, live))
})

test('a production token presented to a sandbox-only deployment answers 403 environment_mismatch', async () => {
  // The token was minted by a production node sharing the database; this node does not serve production.
  const live = await createTenant(t, { environment: 'production' })
  const token = `at_live_${'P'.repeat(43)}`
  await insertAccessToken(t.deps.db, {
    token_hash: sha256Hex(token),
    client_id: live.clientId,
    organization_id: live.organizationId,
    environment: 'production',
    scopes: ['cardholders:read'],
    expires_at: new Date(t.clock.now().getTime() + 900_000),
  })
  const res = await t.api(token, 'GET', '/v1/programs')
  assert.equal(res.statusCode, 403)
  assert.equal(res.json().error.code, 'environment_mismatch')
  assert.equal(res.json().error.type, 'permission_error')
})

test('with SVC_RELEASES=three_d_secure, authentications:read is issued and advertised', async () => {
  const tenant = await createTenant(t, {
    scopes: ['cardholders:read', 'authentications:read', 'authentications:write'],
  })
  const asked = await tokenFor(t, tenant, { scope: 'authentications:read' })
  assert.equal(asked.statusCode, 200, asked.body)
  assert.equal(asked.json().scope, 'authentications:read')
  const all = (await tokenFor(t, tenant)).json()
  assert.deepEqual(all.scope.split(' ').sort(), [
    'authentications:read',
    'authentications:write',
    'cardholders:read',
  ])
  const meta = (
    await t.app.inject({ method: 'GET', url: '/.well-known/oauth-authorization-server' })
  ).json()
  assert.ok(meta.scopes_supported.includes('authentications:read'))
})

test('a sandbox client of a sandbox-only deployment works as usual', async () => {
  const tenant = await createTenant(t, { scopes: ['cardholders:read'] })
  const res = await tokenFor(t, tenant)
  assert.equal(res.statusCode, 200)
  assert.equal((await t.api(res.json().access_token, 'GET', '/v1/programs')).statusCode, 200)
})
