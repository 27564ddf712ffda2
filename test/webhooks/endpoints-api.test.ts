import assert from 'node:assert/strict'
import { Writable } from 'node:stream'
import { after, before, describe, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { emitEvent } from './helpers.js'

describe('webhook endpoints API', () => {
  let t: TestApp
  let tenant: TestClient
  let logs = ''

  before(async () => {
    const sink = new Writable({
      write(chunk, _enc, cb) {
        logs += chunk.toString()
        cb()
      },
    })
    t = await startTestApp({ env: { LOG_LEVEL: 'debug' }, logDestination: sink })
    tenant = await createTenant(t)
  })
  after(async () => {
    await t.close()
  })

  const call = async (
    method: string,
    url: string,
    body?: unknown,
    who: TestClient = tenant,
    scope?: string,
  ) => t.api(await who.token(scope), method, url, body)
  const create = (body: Record<string, unknown>, who?: TestClient) =>
    call('POST', '/v1/webhook_endpoints', body, who)

  test('create answers 201 with a whe_ id and the whsec_ secret, which list and retrieve never show', async () => {
    const res = await create({
      url: 'https://hooks.example.com/svc',
      enabled_events: ['card.created', 'card.issued'],
      description: 'main',
    })
    assert.equal(res.statusCode, 201)
    const ep = res.json()
    assert.match(ep.id, /^whe_[0-9A-Z]{26}$/)
    assert.equal(ep.object, 'webhook_endpoint')
    assert.match(ep.secret, /^whsec_[0-9A-Za-z]{40,}$/)
    assert.equal(ep.url, 'https://hooks.example.com/svc')
    assert.deepEqual(ep.enabled_events, ['card.created', 'card.issued'])
    assert.equal(ep.description, 'main')
    assert.equal(ep.status, 'enabled')
    assert.equal(ep.api_version, '2026-11-01')
    assert.match(ep.created_at, /Z$/)
    assert.match(ep.updated_at, /Z$/)

    const one = (await call('GET', `/v1/webhook_endpoints/${ep.id}`)).json()
    assert.equal(one.secret, undefined)
    assert.equal(one.id, ep.id)
    const list = (await call('GET', '/v1/webhook_endpoints')).json()
    assert.equal(list.object, 'list')
    assert.ok(list.data.some((e: any) => e.id === ep.id))
    assert.ok(list.data.every((e: any) => e.secret === undefined))

    const row = await t.deps.db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', ep.id)
      .executeTakeFirstOrThrow()
    assert.ok(!JSON.stringify(row).includes(ep.secret), 'the secret is stored encrypted')
    await emitEvent(t, tenant, 'card.created')
    await new JobRunner(t.deps, t.jobs).drain()
    assert.ok(logs.includes(ep.id) || logs.includes('"request"'), 'logs were captured')
    assert.ok(!logs.includes(ep.secret), 'the secret never reaches the logs')
  })

  test('enabled_events must name catalogue types or *', async () => {
    const star = await create({ url: 'https://a.example.com/', enabled_events: ['*'] })
    assert.equal(star.statusCode, 201)
    const unknown = await create({
      url: 'https://a.example.com/',
      enabled_events: ['card.created', 'card.teleported'],
    })
    assert.equal(unknown.statusCode, 400)
    assert.equal(unknown.json().error.code, 'invalid_parameter')
    assert.equal(unknown.json().error.param, 'enabled_events[1]')
    const empty = await create({ url: 'https://a.example.com/', enabled_events: [] })
    assert.equal(empty.json().error.code, 'invalid_parameter')
    const missing = await create({ enabled_events: ['*'] })
    assert.equal(missing.json().error.code, 'missing_parameter')
    assert.equal(missing.json().error.param, 'url')
    const extra = await create({
      url: 'https://a.example.com/',
      enabled_events: ['*'],
      color: 'red',
    })
    assert.equal(extra.json().error.code, 'unknown_parameter')
    assert.equal(extra.json().error.param, 'color')
  })

  test('a URL that is not http(s) answers 400 invalid_webhook_url', async () => {
    for (const url of ['ftp://files.example.com/x', 'not a url', 'https://user:pw@example.com/']) {
      const res = await create({ url, enabled_events: ['*'] })
      assert.equal(res.statusCode, 400, url)
      assert.equal(res.json().error.code, 'invalid_webhook_url')
      assert.equal(res.json().error.type, 'invalid_request_error')
      assert.equal(res.json().error.param, 'url')
    }
  })

  test('PATCH changes url, events, description and status; rotate_secret returns a new secret', async () => {
    const ep = (
      await create({
        url: 'https://a.example.com/1',
        enabled_events: ['card.created'],
        description: 'x',
      })
    ).json()
    const res = await call('PATCH', `/v1/webhook_endpoints/${ep.id}`, {
      url: 'https://b.example.com/2',
      enabled_events: ['*'],
      description: null,
      status: 'disabled',
    })
    assert.equal(res.statusCode, 200)
    const patched = res.json()
    assert.equal(patched.url, 'https://b.example.com/2')
    assert.deepEqual(patched.enabled_events, ['*'])
    assert.equal(patched.description, null)
    assert.equal(patched.status, 'disabled')
    assert.equal(patched.secret, undefined)
    const badStatus = await call('PATCH', `/v1/webhook_endpoints/${ep.id}`, { status: 'paused' })
    assert.equal(badStatus.json().error.code, 'invalid_parameter')
    const badUrl = await call('PATCH', `/v1/webhook_endpoints/${ep.id}`, { url: 'gopher://x' })
    assert.equal(badUrl.json().error.code, 'invalid_webhook_url')
    const enabled = await call('PATCH', `/v1/webhook_endpoints/${ep.id}`, { status: 'enabled' })
    assert.equal(enabled.json().status, 'enabled')

    const rotated = await call('POST', `/v1/webhook_endpoints/${ep.id}/rotate_secret`)
    assert.equal(rotated.statusCode, 200)
    assert.match(rotated.json().secret, /^whsec_/)
    assert.notEqual(rotated.json().secret, ep.secret)
  })

  test('DELETE removes the endpoint; it then answers 404 webhook_endpoint_not_found', async () => {
    const ep = (await create({ url: 'https://a.example.com/del', enabled_events: ['*'] })).json()
    const del = await call('DELETE', `/v1/webhook_endpoints/${ep.id}`)
    assert.equal(del.statusCode, 200)
    assert.deepEqual(del.json(), { id: ep.id, object: 'webhook_endpoint', deleted: true })
    for (const [method, url] of [
      ['GET', ''],
      ['PATCH', ''],
      ['DELETE', ''],
      ['POST', '/rotate_secret'],
    ] as const) {
      const res = await call(
        method,
        `/v1/webhook_endpoints/${ep.id}${url}`,
        method === 'PATCH' ? {} : undefined,
      )
      assert.equal(res.statusCode, 404, `${method} ${url}`)
      assert.equal(res.json().error.code, 'webhook_endpoint_not_found')
    }
  })

  test('the eleventh endpoint of an environment answers 422 webhook_endpoint_limit_reached', async () => {
    const org = await createTenant(t)
    const made = []
    for (let i = 0; i < 10; i++) {
      const res = await create({ url: `https://a.example.com/${i}`, enabled_events: ['*'] }, org)
      assert.equal(res.statusCode, 201)
      made.push(res.json().id)
    }
    const over = await create({ url: 'https://a.example.com/11', enabled_events: ['*'] }, org)
    assert.equal(over.statusCode, 422)
    assert.equal(over.json().error.code, 'webhook_endpoint_limit_reached')
    assert.equal(over.json().error.type, 'validation_error')
    const production = await createTenant(t, {
      environment: 'production',
      organizationId: org.organizationId,
    })
    assert.equal(
      (await create({ url: 'https://a.example.com/p', enabled_events: ['*'] }, production))
        .statusCode,
      201,
      'the limit is per environment',
    )
    await call('DELETE', `/v1/webhook_endpoints/${made[0]}`, undefined, org)
    assert.equal(
      (await create({ url: 'https://a.example.com/again', enabled_events: ['*'] }, org)).statusCode,
      201,
    )
  })

  test('concurrent creates cannot pass the limit together: the scope is counted under a lock', async () => {
    const org = await createTenant(t)
    const token = await org.token()
    for (let i = 0; i < 8; i++)
      assert.equal(
        (await create({ url: `https://a.example.com/c${i}`, enabled_events: ['*'] }, org))
          .statusCode,
        201,
      )
    const racing = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        t.api(token, 'POST', '/v1/webhook_endpoints', {
          url: `https://a.example.com/race${i}`,
          enabled_events: ['*'],
        }),
      ),
    )
    assert.deepEqual(racing.map((r) => r.statusCode).sort(), [201, 201, 422, 422, 422, 422])
    const listed = await call('GET', '/v1/webhook_endpoints?limit=100', undefined, org)
    assert.equal(listed.json().data.length, 10)
  })

  test('endpoints need webhooks:write and stay within their organization and environment', async () => {
    const ep = (await create({ url: 'https://a.example.com/own', enabled_events: ['*'] })).json()
    const noScope = await call('GET', '/v1/webhook_endpoints', undefined, tenant, 'cards:read')
    assert.equal(noScope.statusCode, 403)
    assert.equal(noScope.json().error.code, 'insufficient_scope')
    const stranger = await createTenant(t)
    const foreign = await call('GET', `/v1/webhook_endpoints/${ep.id}`, undefined, stranger)
    assert.equal(foreign.statusCode, 404)
    assert.equal(foreign.json().error.code, 'webhook_endpoint_not_found')
    assert.equal(
      (await call('DELETE', `/v1/webhook_endpoints/${ep.id}`, undefined, stranger)).statusCode,
      404,
    )
    const production = await createTenant(t, {
      environment: 'production',
      organizationId: tenant.organizationId,
    })
    const mixed = await call('GET', `/v1/webhook_endpoints/${ep.id}`, undefined, production)
    assert.equal(mixed.statusCode, 403)
    assert.equal(mixed.json().error.code, 'environment_mismatch')
    const theirs = (await call('GET', '/v1/webhook_endpoints', undefined, stranger)).json()
    assert.equal(theirs.data.length, 0)
  })
})
