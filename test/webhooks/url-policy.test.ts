import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import {
  assertPublicHost,
  checkWebhookUrl,
  classifyAddress,
  isInternalHostname,
  WebhookUrlRefused,
  type Resolver,
  type WebhookUrlPolicy,
} from '../../src/modules/webhooks/url-policy.js'
import { sendWebhook } from '../../src/modules/webhooks/sender.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { startReceiver } from './helpers.js'

describe('webhook URL policy: address classifier', () => {
  test('public addresses are public', () => {
    for (const a of [
      '8.8.8.8',
      '1.1.1.1',
      '93.184.216.34',
      '2606:4700:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
    ]) {
      assert.equal(classifyAddress(a), 'public', a)
    }
  })

  test('loopback, private, link-local, shared, metadata and other special ranges are refused', () => {
    const cases: [string, string][] = [
      ['127.0.0.1', 'loopback'],
      ['127.255.0.9', 'loopback'],
      ['::1', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.16.5.4', 'private'],
      ['172.31.255.255', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.10.10', 'link_local'],
      ['fe80::1', 'link_local'],
      ['fe80::1%eth0', 'link_local'],
      ['169.254.169.254', 'metadata'],
      ['fd00:ec2::254', 'metadata'],
      ['100.64.0.1', 'shared'],
      ['100.127.255.254', 'shared'],
      ['fc00::1', 'unique_local'],
      ['fd12:3456::1', 'unique_local'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['224.0.0.251', 'multicast'],
      ['ff02::1', 'multicast'],
      ['192.0.2.1', 'documentation'],
      ['2001:db8::1', 'documentation'],
      ['240.0.0.1', 'reserved'],
      ['255.255.255.255', 'reserved'],
      ['198.18.0.1', 'reserved'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['::ffff:a9fe:a9fe', 'metadata'],
      ['64:ff9b::10.0.0.1', 'private'],
      ['2002:c0a8:0101::1', 'private'],
    ]
    for (const [address, cls] of cases) assert.equal(classifyAddress(address), cls, address)
    assert.equal(classifyAddress('not-an-ip'), 'invalid')
  })

  test('internal host names are recognised without asking DNS', () => {
    for (const h of [
      'localhost',
      'LOCALHOST.',
      'api.localhost',
      'printer.local',
      'metadata.google.internal',
      'intranet',
      'router.home.arpa',
    ]) {
      assert.equal(isInternalHostname(h), true, h)
    }
    assert.equal(isInternalHostname('hooks.example.com'), false)
  })
})

describe('webhook URL policy: checkWebhookUrl', () => {
  const resolver =
    (table: Record<string, string[]>): Resolver =>
    async (host) => {
      const addresses = table[host]
      if (!addresses) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' })
      return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }))
    }
  const dns = resolver({
    'hooks.example.com': ['93.184.216.34', '2606:2800:220:1::248'],
    'rebind.example.com': ['93.184.216.34', '10.0.0.7'],
    'meta.example.com': ['169.254.169.254'],
  })
  const refused = async (url: string, policy: WebhookUrlPolicy = 'public') =>
    assert.rejects(checkWebhookUrl(url, policy, dns), WebhookUrlRefused, url)

  test('an https URL on a host resolving only to public addresses is accepted', async () => {
    assert.equal(
      (await checkWebhookUrl('https://hooks.example.com/svc?x=1', 'public', dns)).hostname,
      'hooks.example.com',
    )
    assert.equal((await checkWebhookUrl('https://8.8.8.8/hook', 'public', dns)).hostname, '8.8.8.8')
  })

  test('http, private addresses, internal names and hosts resolving to any private address are refused', async () => {
    await refused('http://hooks.example.com/')
    await refused('https://127.0.0.1/')
    await refused('https://[::1]:8443/')
    await refused('https://10.1.2.3/')
    await refused('https://169.254.169.254/latest/meta-data')
    await refused('https://localhost/')
    await refused('https://rebind.example.com/')
    await refused('https://meta.example.com/')
    await refused('ftp://hooks.example.com/')
  })

  test('reserved and malformed host names are refused without asking DNS', async () => {
    for (const url of [
      'https://hooks.test/x',
      'https://receiver.example/x',
      'https://a.invalid/x',
      'https://bad_host.example.com/x',
      'https://host.123/x',
      'https://-x.example.com/',
    ]) {
      await refused(url)
    }
  })

  test('a well-formed public name that does not resolve now is accepted at registration and refused at delivery', async () => {
    // The registering node's resolver may be offline; the delivery resolves again before anything is sent.
    assert.equal(
      (await checkWebhookUrl('https://nowhere.example.com/hook', 'public', dns)).hostname,
      'nowhere.example.com',
    )
    await assert.rejects(assertPublicHost('nowhere.example.com', dns), WebhookUrlRefused)
    await assert.rejects(
      assertPublicHost('nowhere.example.com', dns, 'delivery'),
      WebhookUrlRefused,
    )
    assert.deepEqual(await assertPublicHost('nowhere.example.com', dns, 'registration'), [])
  })

  test('allow_private permits http:// and private hosts, never other schemes', async () => {
    assert.ok(await checkWebhookUrl('http://127.0.0.1:3000/hook', 'allow_private', dns))
    assert.ok(await checkWebhookUrl('https://localhost/hook', 'allow_private', dns))
    await refused('ftp://127.0.0.1/', 'allow_private')
  })

  test('allow_local_http (the demo sandbox default) refuses what the interface refuses, except plain http to a local receiver', async () => {
    for (const url of [
      'http://127.0.0.1:3000/hook',
      'http://localhost:4000/hook',
      'http://[::1]:3000/x',
      'http://10.0.0.5/hook',
      'http://receiver/hook',
    ]) {
      assert.ok(await checkWebhookUrl(url, 'allow_local_http', dns), url)
    }
    assert.equal(
      (await checkWebhookUrl('https://hooks.example.com/svc', 'allow_local_http', dns)).hostname,
      'hooks.example.com',
    )
    for (const url of [
      'http://hooks.example.com/',
      'http://8.8.8.8/hook',
      'http://nowhere.example.com/',
      'https://localhost/hook',
      'https://127.0.0.1/',
      'https://10.1.2.3/',
      'https://169.254.169.254/latest',
      'https://rebind.example.com/',
      'https://service.internal/hook',
      'ftp://127.0.0.1/',
    ]) {
      await refused(url, 'allow_local_http')
    }
  })
})

describe('webhook URL policy: API and delivery under the public policy', () => {
  let t: TestApp
  let tenant: TestClient

  before(async () => {
    t = await startTestApp({ env: { WEBHOOK_URL_POLICY: 'public' } })
    tenant = await createTenant(t)
  })
  after(async () => {
    await t.close()
  })

  test('localhost, loopback, private, metadata and plain-http URLs answer 400 invalid_webhook_url', async () => {
    const token = await tenant.token()
    for (const url of [
      'https://localhost/hook',
      'https://127.0.0.1/hook',
      'https://[::1]/hook',
      'https://10.0.0.5/hook',
      'https://169.254.169.254/latest',
      'https://100.64.0.1/x',
      'https://[fd00::1]/x',
      'http://8.8.8.8/hook',
      'https://service.internal/hook',
    ]) {
      const res = await t.api(token, 'POST', '/v1/webhook_endpoints', {
        url,
        enabled_events: ['*'],
      })
      assert.equal(res.statusCode, 400, url)
      assert.equal(res.json().error.code, 'invalid_webhook_url', url)
      assert.equal(res.json().error.type, 'invalid_request_error')
      assert.equal(res.json().error.param, 'url')
    }
    const ok = await t.api(token, 'POST', '/v1/webhook_endpoints', {
      url: 'https://8.8.8.8/hook',
      enabled_events: ['*'],
    })
    assert.equal(ok.statusCode, 201)
    // A public name is accepted whether or not this machine can resolve it (offline CI included).
    const named = await t.api(token, 'POST', '/v1/webhook_endpoints', {
      url: 'https://example.com/webhooks',
      enabled_events: ['*'],
    })
    assert.equal(named.statusCode, 201, named.body)
    const patch = await t.api(token, 'PATCH', `/v1/webhook_endpoints/${ok.json().id}`, {
      url: 'https://127.0.0.1/x',
    })
    assert.equal(patch.json().error.code, 'invalid_webhook_url')
  })

  test('a delivery to a private address is refused at send time, before any request leaves', async () => {
    const receiver = await startReceiver()
    try {
      const port = new URL(receiver.url).port
      const loopback = await sendWebhook(
        new URL(`https://127.0.0.1:${port}/hooks`),
        '{}',
        {},
        'public',
      )
      assert.match(String(loopback.error), /url refused/)
      const named = await sendWebhook(
        new URL(`https://localhost:${port}/hooks`),
        '{}',
        {},
        'public',
      )
      assert.match(String(named.error), /url refused/)
      const plain = await sendWebhook(new URL(receiver.url), '{}', {}, 'public')
      assert.match(String(plain.error), /url refused/)
      assert.equal(receiver.received.length, 0)
    } finally {
      await receiver.close()
    }
  })

  test('under allow_local_http a plain-http local receiver gets the delivery and https to a private address is still refused', async () => {
    const receiver = await startReceiver()
    try {
      const port = new URL(receiver.url).port
      const refusedTls = await sendWebhook(
        new URL(`https://127.0.0.1:${port}/hooks`),
        '{}',
        {},
        'allow_local_http',
      )
      assert.match(String(refusedTls.error), /url refused/)
      assert.equal(receiver.received.length, 0)
      const local = await sendWebhook(
        new URL(receiver.url),
        '{}',
        { 'content-type': 'application/json' },
        'allow_local_http',
      )
      assert.equal(local.statusCode, 200, String(local.error))
      assert.equal(receiver.received.length, 1)
    } finally {
      await receiver.close()
    }
  })

  test('a receiver that does not answer in time is a failed attempt with a timeout error', async () => {
    const receiver = await startReceiver()
    receiver.respond = () => new Promise((resolve) => setTimeout(() => resolve(200), 1000))
    try {
      const res = await sendWebhook(
        new URL(receiver.url),
        '{}',
        { 'content-type': 'application/json' },
        'allow_private',
        100,
      )
      assert.equal(res.statusCode, null)
      assert.match(String(res.error), /ETIMEDOUT/)
      assert.ok(res.durationMs >= 90 && res.durationMs < 1000)
    } finally {
      await receiver.close()
    }
  })
})
