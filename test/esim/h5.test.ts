import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { BASE_URL, createTenant, startTestApp, type TestApp } from '../helpers/app.js'
import {
  completedOrder,
  esimFixture,
  expectError,
  newCardholder,
  packageFor,
  type EsimFixture,
} from './support.js'

let t: TestApp
let fx: EsimFixture
let pkg: any
let esimId: string

before(async () => {
  t = await startTestApp()
  fx = await esimFixture(t)
  pkg = await packageFor(t, fx.token, 'country=FRA&region=local')
  esimId = (
    await completedOrder(t, fx.token, { package_id: pkg.id, cardholder_id: fx.cardholder.id })
  ).esim_id
})
after(async () => {
  await t.close()
})

async function link(body: Record<string, unknown>): Promise<any> {
  const res = await t.api(fx.token, 'POST', '/v1/esim/h5_links', body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

const pathOf = (url: string) => new URL(url).pathname
const open = (path: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: path, headers })

/** Opens the page like a browser and returns what its forms need: the cookie, the CSRF token and a nonce. */
async function session(
  path: string,
): Promise<{ page: LightMyRequestResponse; cookie: string; csrf: string; nonce: string }> {
  const page = await open(path)
  assert.equal(page.statusCode, 200, page.body)
  const cookie = String(page.headers['set-cookie']).split(';')[0]
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
  const nonce = /name="nonce" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
  return { page, cookie, csrf, nonce }
}

const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  })

async function esimCount(cardholderId: string): Promise<number> {
  return (
    await t.api(fx.token, 'GET', `/v1/esim/esims?cardholder_id=${cardholderId}&limit=100`)
  ).json().data.length
}

describe('H5 links', () => {
  test('a link is created for one cardholder: 201 esim_h5_link, 15 minutes, an unguessable token kept only as a digest', async () => {
    const l = await link({ cardholder_id: fx.cardholder.id })
    assert.equal(l.object, 'esim_h5_link')
    assert.match(l.id, /^h5_/)
    assert.equal(l.allow_purchases, false)
    const m = new RegExp(`^${BASE_URL}/h5/([A-Za-z0-9_-]{43})$`).exec(l.url)
    assert.ok(m, l.url)
    assert.ok(Buffer.from(m[1], 'base64url').length >= 16, 'at least 128 bits')
    assert.equal(
      new Date(l.expires_at).getTime() - new Date(l.created_at).getTime(),
      15 * 60 * 1000,
    )
    const row = await t.deps.db
      .selectFrom('esim_h5_links')
      .selectAll()
      .where('id', '=', l.id)
      .executeTakeFirstOrThrow()
    assert.equal(JSON.stringify(row).includes(m[1]), false, 'the token itself is not stored')
    expectError(
      await t.api(fx.token, 'POST', '/v1/esim/h5_links', {
        cardholder_id: 'chd_00000000000000000000000000',
      }),
      404,
      'cardholder_not_found',
      'cardholder_id',
    )
    const stranger = await (await createTenant(t)).token()
    expectError(
      await t.api(stranger, 'POST', '/v1/esim/h5_links', { cardholder_id: fx.cardholder.id }),
      404,
      'cardholder_not_found',
    )
    const readOnly = await (await createTenant(t, { scopes: ['esim:read'] })).token()
    expectError(
      await t.api(readOnly, 'POST', '/v1/esim/h5_links', { cardholder_id: fx.cardholder.id }),
      403,
      'insufficient_scope',
    )
  })

  test("the page shows the cardholder's eSIM with an SVG QR code, install links, usage and validity, behind strict security headers", async () => {
    await t.api(fx.token, 'POST', `/v1/simulate/esim/esims/${esimId}/usage`, { data_used_mb: 512 })
    const esim = (await t.api(fx.token, 'GET', `/v1/esim/esims/${esimId}`)).json()
    const other = await completedOrder(t, fx.token, {
      package_id: pkg.id,
      cardholder_id: (await newCardholder(t, fx.token)).id,
    })
    const l = await link({ cardholder_id: fx.cardholder.id })
    const page = await open(pathOf(l.url))
    assert.equal(page.statusCode, 200)
    assert.match(String(page.headers['content-type']), /^text\/html/)
    const csp = String(page.headers['content-security-policy'])
    for (const rule of [
      "default-src 'none'",
      "frame-ancestors 'none'",
      "form-action 'self'",
      "base-uri 'none'",
    ])
      assert.ok(csp.includes(rule), rule)
    assert.equal(page.headers['referrer-policy'], 'no-referrer')
    assert.equal(page.headers['x-frame-options'], 'DENY')
    assert.equal(page.headers['x-content-type-options'], 'nosniff')
    assert.equal(page.headers['cache-control'], 'no-store')
    const html = page.body
    assert.ok(html.includes(`data-esim-id="${esimId}"`))
    assert.equal(html.includes(other.esim_id), false, "another cardholder's eSIM is not shown")
    assert.match(html, /<svg[^>]*viewBox/)
    assert.ok(html.includes(esim.ios_install_url) && html.includes(esim.android_install_url))
    assert.ok(html.includes('Install on iPhone') && html.includes('Install on Android'))
    assert.ok(html.includes('512 MB</b> used'))
    assert.match(html, /Valid until \d{1,2} [A-Z][a-z]{2} \d{4}/)
    assert.equal(/at_(test|live)_/.test(html), false, 'no API token reaches the browser')
    assert.equal(html.includes('method="post"'), false, 'no purchase form without allow_purchases')
    assert.equal((await open(pathOf(l.url))).statusCode, 200, 'opened any number of times')
  })

  test('an expired link answers a friendly 410 page; an unknown one 404', async () => {
    const l = await link({ cardholder_id: fx.cardholder.id, allow_purchases: true })
    t.clock.advance(15 * 60 * 1000 - 1000)
    assert.equal((await open(pathOf(l.url))).statusCode, 200)
    t.clock.advance(2000)
    try {
      const expired = await open(pathOf(l.url))
      assert.equal(expired.statusCode, 410)
      assert.match(String(expired.headers['content-type']), /^text\/html/)
      assert.ok(expired.body.includes('This link has expired'))
      assert.equal(expired.body.includes(esimId), false)
      assert.equal((await post(`${pathOf(l.url)}/orders`, { package_id: pkg.id })).statusCode, 410)
    } finally {
      t.clock.reset()
    }
    const unknown = await open('/h5/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA')
    assert.equal(unknown.statusCode, 404)
    assert.ok(unknown.body.includes('This link does not work'))
  })
})

describe('H5 purchases', () => {
  test('a form post without a valid CSRF token, with a foreign cookie or from another origin is refused (403) and buys nothing', async () => {
    const l = await link({ cardholder_id: fx.cardholder.id, allow_purchases: true })
    const path = pathOf(l.url)
    const { cookie, csrf, nonce } = await session(path)
    assert.ok(csrf && nonce && cookie.startsWith('svc_h5_csrf='))
    const before = await esimCount(fx.cardholder.id)
    const attempts = [
      await post(`${path}/orders`, { package_id: pkg.id, nonce }, { cookie }),
      await post(`${path}/orders`, { package_id: pkg.id, nonce, csrf_token: csrf }),
      await post(
        `${path}/orders`,
        { package_id: pkg.id, nonce, csrf_token: csrf },
        { cookie: `svc_h5_csrf=${'x'.repeat(32)}` },
      ),
      await post(
        `${path}/orders`,
        { package_id: pkg.id, nonce, csrf_token: csrf },
        { cookie, origin: 'https://evil.example' },
      ),
      await post(`${path}/orders`, { package_id: pkg.id, nonce, csrf_token: 'forged' }, { cookie }),
    ]
    for (const res of attempts) {
      assert.equal(res.statusCode, 403, res.body)
      assert.ok(res.body.includes('This form could not be sent'))
    }
    assert.equal(await esimCount(fx.cardholder.id), before)
    // The CSRF token of one link does not work on another.
    const other = pathOf(
      (await link({ cardholder_id: fx.cardholder.id, allow_purchases: true })).url,
    )
    assert.equal(
      (await post(`${other}/orders`, { package_id: pkg.id, nonce, csrf_token: csrf }, { cookie }))
        .statusCode,
      403,
    )
  })

  test('an allowed link buys a package and a top-up through its forms; a double submit buys once', async () => {
    const l = await link({ cardholder_id: fx.cardholder.id, allow_purchases: true })
    const path = pathOf(l.url)
    const { page, cookie, csrf, nonce } = await session(path)
    assert.ok(
      page.body.includes(`data-package-id="${pkg.id}"`),
      'the home country plans are offered',
    )
    const before = await esimCount(fx.cardholder.id)
    const bought = await post(
      `${path}/orders`,
      { package_id: pkg.id, nonce, csrf_token: csrf },
      { cookie, origin: BASE_URL },
    )
    assert.equal(bought.statusCode, 303, bought.body)
    assert.equal(bought.headers.location, `${path}?notice=ordered`)
    assert.equal(await esimCount(fx.cardholder.id), before + 1)
    const again = await post(
      `${path}/orders`,
      { package_id: pkg.id, nonce, csrf_token: csrf },
      { cookie },
    )
    assert.equal(again.headers.location, `${path}?notice=duplicate`)
    assert.equal(await esimCount(fx.cardholder.id), before + 1)
    const shown = await open(`${path}?notice=ordered`, { cookie })
    assert.ok(shown.body.includes('Your new eSIM is ready'))

    const offer = /action="([^"]+\/top_ups)"[\s\S]*?name="top_up_id" value="([^"]+)"/.exec(
      shown.body,
    )
    assert.ok(offer, 'top-up forms are shown')
    const form =
      /name="csrf_token" value="([^"]+)"><input type="hidden" name="nonce" value="([^"]+)"/.exec(
        shown.body,
      )!
    const topped = await post(
      offer[1],
      { top_up_id: offer[2], csrf_token: form[1], nonce: form[2] },
      { cookie },
    )
    assert.equal(topped.headers.location, `${path}?notice=topped_up`)
    const orders = (
      await t.api(fx.token, 'GET', `/v1/esim/orders?cardholder_id=${fx.cardholder.id}&limit=5`)
    ).json().data
    assert.equal(orders[0].type, 'top_up')
    assert.equal(orders[0].top_up_id, offer[2])
  })

  test('a link without allow_purchases refuses purchases with 403', async () => {
    const l = await link({ cardholder_id: fx.cardholder.id })
    const path = pathOf(l.url)
    const { cookie } = await session(path)
    const res = await post(
      `${path}/orders`,
      { package_id: pkg.id, nonce: 'n'.repeat(16), csrf_token: 'x' },
      { cookie },
    )
    assert.equal(res.statusCode, 403)
    assert.ok(res.body.includes('Purchases are not available'))
  })
})
