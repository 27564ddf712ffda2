import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { loadConfig, ConfigError } from '../../src/config.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { assertGenericRefusal, assertionFor, tokenForm } from './support.js'

/**
 * `TRUSTED_PROXIES`: X-Forwarded-For decides the caller's address (its last entry) only when the socket peer is
 * one of the proxies named; unset, no peer's header counts and the peer is the address.
 */

async function programsFrom(
  t: TestApp,
  token: string,
  remoteAddress: string,
  forwardedFor: string,
) {
  return t.app.inject({
    method: 'GET',
    url: '/v1/programs',
    remoteAddress,
    headers: { authorization: `Bearer ${token}`, 'x-forwarded-for': forwardedFor },
  })
}

describe('with TRUSTED_PROXIES set', () => {
  let t: TestApp
  let tenant: TestClient
  let token: string

  before(async () => {
    t = await startTestApp({ env: { TRUSTED_PROXIES: '10.0.0.0/8, 127.0.0.1' } })
    tenant = await createTenant(t, { scopes: ['cardholders:read'] })
    token = await tenant.token()
    await t.operator('PUT', `/operator/v1/organizations/${tenant.organizationId}/network_policy`, {
      environment: 'sandbox',
      ip_allowlist: ['203.0.113.0/24'],
    })
  })
  after(() => t.close())

  test("a trusted proxy's X-Forwarded-For names the caller: its last entry passes the allowlist", async () => {
    assert.equal(
      (await programsFrom(t, token, '10.1.2.3', '198.51.100.1, 203.0.113.7')).statusCode,
      200,
    )
  })

  test('a caller reaching the service directly cannot choose its address with the header', async () => {
    const res = await programsFrom(t, token, '198.51.100.9', '203.0.113.7')
    assert.equal(res.statusCode, 403)
    assert.equal(res.json().error.code, 'ip_not_allowed')
  })
})

describe('without TRUSTED_PROXIES', () => {
  let t: TestApp
  let tenant: TestClient
  let token: string

  before(async () => {
    t = await startTestApp()
    tenant = await createTenant(t, { scopes: ['cardholders:read'] })
    token = await tenant.token()
    await t.operator('PUT', `/operator/v1/organizations/${tenant.organizationId}/network_policy`, {
      environment: 'sandbox',
      ip_allowlist: ['203.0.113.0/24'],
    })
  })
  after(() => t.close())

  test('no header counts: the peer is the address, whatever X-Forwarded-For says', async () => {
    const forged = await programsFrom(t, token, '198.51.100.9', '203.0.113.7')
    assert.equal(forged.statusCode, 403)
    assert.equal(forged.json().error.code, 'ip_not_allowed')
    assert.equal((await programsFrom(t, token, '203.0.113.7', '198.51.100.9')).statusCode, 200)
  })

  test('the token request too: a forged header from outside the policy is refused', async () => {
    const form = tokenForm(await assertionFor(t, tenant))
    const forged = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress: '198.51.100.9',
      payload: form,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-forwarded-for': '203.0.113.7',
      },
    })
    assertGenericRefusal(forged)
    const inside = await t.app.inject({
      method: 'POST',
      url: '/oauth/token',
      remoteAddress: '203.0.113.7',
      payload: tokenForm(await assertionFor(t, tenant)),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    })
    assert.equal(inside.statusCode, 200, inside.body)
  })
})

test('TRUSTED_PROXIES refuses what is not an address or a CIDR block', () => {
  assert.throws(
    () =>
      loadConfig({
        TRUSTED_PROXIES: '10.0.0.0/8, proxy.internal',
        DATA_DIR: '/tmp/svc-trusted-proxies-config',
      }),
    ConfigError,
  )
  assert.deepEqual(
    loadConfig({ TRUSTED_PROXIES: '10.0.0.0/8,::1', DATA_DIR: '/tmp/svc-trusted-proxies-config' })
      .trustedProxies,
    ['10.0.0.0/8', '::1'],
  )
  assert.deepEqual(
    loadConfig({ DATA_DIR: '/tmp/svc-trusted-proxies-config' }).trustedProxies,
    [],
    'unset: no proxy is trusted',
  )
})
