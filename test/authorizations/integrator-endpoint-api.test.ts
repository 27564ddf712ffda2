import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'

describe('the authorization endpoint resource', () => {
  let t: TestApp
  let tenant: TestClient
  let token: string

  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_URL_POLICY: 'public' } })
    tenant = await createTenant(t)
    token = await tenant.token()
  })
  after(async () => {
    await t.close()
  })

  const call = (method: string, url: string, body?: unknown, tok = token) =>
    t.api(tok, method, url, body)

  test('PUT creates it with a whsec_ secret shown once; GET and a second PUT never show it; rotate_secret shows a new one', async () => {
    const missing = await call('GET', '/v1/authorization_endpoint')
    assert.equal(missing.statusCode, 404)
    assert.equal(missing.json().error.code, 'authorization_endpoint_not_found')

    const created = await call('PUT', '/v1/authorization_endpoint', {
      url: 'https://8.8.8.8/authorize',
    })
    assert.equal(created.statusCode, 200, created.body)
    const ep = created.json()
    assert.match(ep.id, /^aep_/)
    assert.equal(ep.object, 'authorization_endpoint')
    assert.equal(ep.url, 'https://8.8.8.8/authorize')
    assert.equal(ep.timeout_ms, 1500)
    assert.equal(ep.stand_in, 'decline')
    assert.equal(ep.status, 'enabled')
    assert.match(ep.secret, /^whsec_[A-Za-z0-9]{20,}$/)

    const got = (await call('GET', '/v1/authorization_endpoint')).json()
    assert.equal(got.secret, undefined)
    assert.equal(got.id, ep.id)

    const changed = await call('PUT', '/v1/authorization_endpoint', {
      url: 'https://example.com/authorize',
      timeout_ms: 800,
      stand_in: 'approve',
    })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json().secret, undefined)
    assert.equal(changed.json().id, ep.id)
    assert.deepEqual(
      [changed.json().url, changed.json().timeout_ms, changed.json().stand_in],
      ['https://example.com/authorize', 800, 'approve'],
    )
    // A PUT naming only the url keeps the settings set before (it used to reset them to the defaults).
    const moved = (
      await call('PUT', '/v1/authorization_endpoint', { url: 'https://example.org/authorize' })
    ).json()
    assert.deepEqual(
      [moved.url, moved.timeout_ms, moved.stand_in],
      ['https://example.org/authorize', 800, 'approve'],
    )

    const rotated = await call('POST', '/v1/authorization_endpoint/rotate_secret', {})
    assert.equal(rotated.statusCode, 200, rotated.body)
    assert.match(rotated.json().secret, /^whsec_/)
    assert.notEqual(rotated.json().secret, ep.secret)
    assert.equal((await call('GET', '/v1/authorization_endpoint')).json().secret, undefined)
    // The secret is stored sealed, never in clear.
    const row = await t.deps.db
      .selectFrom('authorization_endpoints')
      .selectAll()
      .where('id', '=', ep.id)
      .executeTakeFirstOrThrow()
    assert.ok(!JSON.stringify(row).includes(rotated.json().secret))
    assert.ok(!JSON.stringify(row).includes(ep.secret))

    const deleted = await call('DELETE', '/v1/authorization_endpoint')
    assert.deepEqual(deleted.json(), { id: ep.id, object: 'authorization_endpoint', deleted: true })
    assert.equal((await call('GET', '/v1/authorization_endpoint')).statusCode, 404)
    assert.equal(
      (await call('DELETE', '/v1/authorization_endpoint')).json().error.code,
      'authorization_endpoint_not_found',
    )
    assert.equal(
      (await call('POST', '/v1/authorization_endpoint/rotate_secret', {})).json().error.code,
      'authorization_endpoint_not_found',
    )

    const again = (
      await call('PUT', '/v1/authorization_endpoint', { url: 'https://8.8.8.8/authorize' })
    ).json()
    assert.notEqual(again.id, ep.id)
    assert.match(again.secret, /^whsec_/)
  })

  test("URL rules are the webhook endpoints': private, loopback and plain-http URLs answer 400 invalid_webhook_url", async () => {
    for (const url of [
      'https://localhost/a',
      'https://127.0.0.1/a',
      'https://10.0.0.5/a',
      'https://169.254.169.254/latest',
      'http://8.8.8.8/a',
      'ftp://8.8.8.8/a',
      'not a url',
      'https://service.internal/a',
      'https://user:pw@8.8.8.8/a',
    ]) {
      const res = await call('PUT', '/v1/authorization_endpoint', { url })
      assert.equal(res.statusCode, 400, url)
      assert.equal(res.json().error.code, 'invalid_webhook_url', url)
      assert.equal(res.json().error.param, 'url')
    }
  })

  test('timeout_ms is 100–2000 and stand_in approve or decline; unknown fields are refused', async () => {
    for (const body of [
      { timeout_ms: 99 },
      { timeout_ms: 2001 },
      { stand_in: 'maybe' },
      { extra: 1 },
    ]) {
      const res = await call('PUT', '/v1/authorization_endpoint', {
        url: 'https://8.8.8.8/a',
        ...body,
      })
      assert.equal(res.statusCode, 400, JSON.stringify(body))
    }
  })

  test('every operation needs the scope webhooks:write (403 insufficient_scope otherwise)', async () => {
    const narrow = await tenant.token('transactions:read transactions:write')
    for (const [method, url, body] of [
      ['PUT', '/v1/authorization_endpoint', { url: 'https://8.8.8.8/a' }],
      ['GET', '/v1/authorization_endpoint'],
      ['DELETE', '/v1/authorization_endpoint'],
      ['POST', '/v1/authorization_endpoint/rotate_secret', {}],
      ['GET', '/v1/authorization_endpoint/attempts'],
    ] as const) {
      const res = await call(method, url, body, narrow)
      assert.equal(res.statusCode, 403, `${method} ${url}`)
      assert.equal(res.json().error.code, 'insufficient_scope')
    }
    const allowed = await call(
      'GET',
      '/v1/authorization_endpoint/attempts',
      undefined,
      await tenant.token('webhooks:write'),
    )
    assert.equal(allowed.statusCode, 200)
  })

  test('each organization and environment has its own endpoint', async () => {
    await call('PUT', '/v1/authorization_endpoint', { url: 'https://8.8.8.8/mine' })
    const stranger = await createTenant(t)
    const theirs = await call(
      'GET',
      '/v1/authorization_endpoint',
      undefined,
      await stranger.token(),
    )
    assert.equal(theirs.statusCode, 404)
    const production = await createTenant(t, {
      environment: 'production',
      organizationId: tenant.organizationId,
    })
    assert.equal(
      (await call('GET', '/v1/authorization_endpoint', undefined, await production.token()))
        .statusCode,
      404,
    )
    assert.equal(
      (await call('GET', '/v1/authorization_endpoint')).json().url,
      'https://8.8.8.8/mine',
    )
  })
})

describe('the authorization endpoint under the local-http allowance', () => {
  let t: TestApp
  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_URL_POLICY: 'allow_local_http' } })
  })
  after(async () => {
    await t.close()
  })

  test('plain http to a local receiver is accepted, plain http to a public host is not', async () => {
    const tenant = await createTenant(t)
    const token = await tenant.token()
    const local = await t.api(token, 'PUT', '/v1/authorization_endpoint', {
      url: 'http://127.0.0.1:4343/authorize',
    })
    assert.equal(local.statusCode, 200, local.body)
    const remote = await t.api(token, 'PUT', '/v1/authorization_endpoint', {
      url: 'http://8.8.8.8/authorize',
    })
    assert.equal(remote.json().error.code, 'invalid_webhook_url')
  })
})
