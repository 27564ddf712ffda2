import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { completedOrder, esimFixture, packageFor, type EsimFixture } from '../esim/support.js'
import {
  axeViolations,
  launchChromium,
  screenshot,
  seriousOrCritical,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The hosted eSIM page in a real browser: Debian's chromium driven by playwright-core at a phone's viewport.
 * The README's screenshots (docs/screenshots/h5-*.png) are rewritten only when SCREENSHOTS=1.
 */

let t: TestApp
let fx: EsimFixture
let origin: string
let esimId: string
let browser: import('playwright-core').Browser

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  fx = await esimFixture(t)
  const pkg = await packageFor(t, fx.token, 'country=FRA&region=local')
  esimId = (
    await completedOrder(t, fx.token, { package_id: pkg.id, cardholder_id: fx.cardholder.id })
  ).esim_id
  await t.api(fx.token, 'POST', `/v1/simulate/esim/esims/${esimId}/usage`, {
    data_used_mb: Math.round(pkg.data_mb * 0.42),
  })
  browser = await launchChromium()
})
after(async () => {
  await browser?.close()
  await t?.close()
})

async function phone() {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: 'en-GB',
  })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  return { context, page, problems }
}

async function h5Link(allowPurchases: boolean): Promise<string> {
  const res = await t.api(fx.token, 'POST', '/v1/esim/h5_links', {
    cardholder_id: fx.cardholder.id,
    allow_purchases: allowPurchases,
  })
  assert.equal(res.statusCode, 201, res.body)
  return origin + new URL(res.json().url).pathname
}

test('on a phone the page shows the eSIM, its QR code and install buttons, and an allowed link buys a top-up', {
  skip,
  timeout: 120_000,
}, async () => {
  const { context, page, problems } = await phone()
  try {
    // The eSIM's own alerts: 42 % used has passed 25 %; a 720-hour warning covers its whole validity.
    const own = await t.api(fx.token, 'PATCH', `/v1/esim/esims/${esimId}`, {
      alert_settings: { usage_thresholds_pct: [25, 50], validity_warning_hours: [720] },
    })
    assert.equal(own.statusCode, 200, own.body)
    const url = await h5Link(true)
    const response = await page.goto(url)
    assert.equal(response?.status(), 200)
    await page.getByRole('heading', { name: /Hi Ada/ }).waitFor()
    const card = page.locator(`[data-esim-id="${esimId}"]`)
    assert.equal(await card.isVisible(), true)
    const qr = card.locator('.qr-code svg')
    const box = await qr.boundingBox()
    assert.ok(
      box && box.width >= 150 && box.height >= 150,
      `QR code drawn at ${JSON.stringify(box)}`,
    )
    assert.match(
      (await card.getByRole('link', { name: 'Install on iPhone' }).getAttribute('href')) ?? '',
      /^https:\/\/esimsetup\.apple\.com\/esim_qrcode_provisioning\?carddata=LPA%3A1%24/,
    )
    assert.match(
      (await card.getByRole('link', { name: 'Install on Android' }).getAttribute('href')) ?? '',
      /^https:\/\/esimsetup\.android\.com\//,
    )
    assert.match(await card.innerText(), /used of/)
    assert.match(await card.innerText(), /Valid until/)
    await card
      .locator('[data-alert="usage"]')
      .getByText("You have used 25 % of this plan's data.")
      .waitFor()
    const validUntil = new Date(own.json().valid_until).getTime()
    if (validUntil - Date.now() <= 720 * 3_600_000)
      assert.match(
        await card.locator('[data-alert="validity"]').innerText(),
        /^This eSIM's plan ends in \d+ hours?\.$/,
      )
    await screenshot(page, 'h5-esim.png', { fullPage: true })

    const dataOf = async () => {
      const { packages } = (await t.api(fx.token, 'GET', `/v1/esim/esims/${esimId}`)).json()
      return {
        count: packages.length,
        total: packages.reduce((sum: number, p: any) => sum + p.data_mb, 0),
      }
    }
    const before = await dataOf()
    const addButton = card.getByRole('button', { name: /^Add for/ }).first()
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST'),
      addButton.click(),
    ])
    assert.equal(posted.status(), 303, `${posted.status()} ${await posted.text().catch(() => '')}`)
    await page.waitForURL(/notice=topped_up/)
    await page.getByRole('status').filter({ hasText: 'Data added' }).waitFor()
    // The top-up joins the eSIM as a package of its own and is shown on the card.
    const afterTopUp = await dataOf()
    assert.equal(afterTopUp.count, before.count + 1)
    assert.ok(
      afterTopUp.total > before.total,
      `data grew from ${before.total} to ${afterTopUp.total}`,
    )
    assert.equal(await card.locator('.pkg').count(), afterTopUp.count)
    await screenshot(page, 'h5-top-up.png')
    await page.locator('#buy-h').scrollIntoViewIfNeeded()
    await screenshot(page, 'h5-buy.png')
    assert.deepEqual(
      seriousOrCritical(await axeViolations(page)),
      [],
      'no serious or critical accessibility violations (axe-core)',
    )
    assert.deepEqual(problems, [], 'no console errors (a CSP violation would show here)')
  } finally {
    await context.close()
  }
})

test('after 15 minutes the same link shows the friendly expired page', {
  skip,
  timeout: 60_000,
}, async () => {
  const { context, page } = await phone()
  try {
    const url = await h5Link(false)
    assert.equal((await page.goto(url))?.status(), 200)
    t.clock.advance(15 * 60 * 1000 + 1000)
    const expired = await page.reload()
    assert.equal(expired?.status(), 410)
    await page.getByRole('heading', { name: 'This link has expired' }).waitFor()
    await screenshot(page, 'h5-expired.png')
    assert.deepEqual(
      seriousOrCritical(await axeViolations(page)),
      [],
      'no serious or critical accessibility violations (axe-core)',
    )
  } finally {
    t.clock.reset()
    await context.close()
  }
})
