import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import {
  completedOrder,
  esimFixture,
  fundedAccount,
  packageFor,
  type EsimFixture,
} from '../esim/support.js'
import {
  axeViolations,
  launchChromium,
  seriousOrCritical,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The hosted eSIM page in a real browser at a phone's viewport says when auto top-up is on (and when it runs), after
 * a top-up it bought; the page stays axe-clean.
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
  const pkg = await packageFor(t, fx.token, 'country=DEU&region=local', 5 * 1024)
  const account = await fundedAccount(t, fx, 100_000)
  esimId = (
    await completedOrder(t, fx.token, { package_id: pkg.id, cardholder_id: fx.cardholder.id })
  ).esim_id
  const set = await t.api(fx.token, 'PATCH', `/v1/esim/esims/${esimId}`, {
    auto_top_up: {
      top_up_id: pkg.top_up_ids[0],
      account_id: account.id,
      trigger: 'threshold',
      threshold_pct: 80,
      max_per_month: 2,
    },
  })
  assert.equal(set.statusCode, 200, set.body)
  const used = await t.api(fx.token, 'POST', `/v1/simulate/esim/esims/${esimId}/usage`, {
    data_used_mb: Math.ceil(pkg.data_mb * 0.85),
  })
  assert.equal(used.json().packages.length, 2, 'the auto top-up ran')
  browser = await launchChromium()
})
after(async () => {
  await browser?.close()
  await t?.close()
})

test('on a phone the eSIM says auto top-up is on, beside the package it added', {
  skip,
  timeout: 120_000,
}, async () => {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    deviceScaleFactor: 2,
    isMobile: true,
    hasTouch: true,
    locale: 'en-GB',
  })
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(e.message))
  try {
    const res = await t.api(fx.token, 'POST', '/v1/esim/h5_links', {
      cardholder_id: fx.cardholder.id,
    })
    assert.equal(res.statusCode, 201, res.body)
    const response = await page.goto(origin + new URL(res.json().url).pathname)
    assert.equal(response?.status(), 200)
    const card = page.locator(`[data-esim-id="${esimId}"]`)
    await card
      .getByText('Auto top-up is on: more data is added when you have used 80 % of your data.')
      .waitFor()
    assert.equal(await card.locator('.pkg').count(), 2, 'the package it added is shown')
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [])
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
