import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Page } from 'playwright-core'
import { authorizeRaw, fundedCard, MERCHANT } from '../authorizations/support.js'
import { invite } from '../console/support.js'
import {
  createTenant,
  listenOnPort,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'
import {
  axeViolations,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signedInThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * Every list of the console, with rows in it, at 1,280 and 390 px (real Chromium, axe-core): no list scrolls
 * sideways at 1,280 px, no page does at 390 px (each row is then a card of labelled facts), and the lists name
 * people and cards (`Visa •••• 4242`) rather than showing ids alone.
 */

const PASSWORD = 'meadow-cobalt-lantern-19'
const LISTS = [
  '/console/cardholders',
  '/console/accounts',
  '/console/cards',
  '/console/authorizations',
  '/console/authorization-rules',
  '/console/transactions',
  '/console/disputes',
  '/console/network-tokens',
  '/console/esim/orders',
  '/console/esims',
  '/console/reports',
  '/console/developers/api-clients',
  '/console/developers/webhooks',
  '/console/developers/events',
  '/console/audit',
]

let t: TestApp
let tenant: TestClient
let origin: string
let browser: import('playwright-core').Browser
let last4: string

before(async () => {
  if (skip) return
  t = await startTestApp()
  tenant = await createTenant(t)
  const token = await tenant.token()
  const f = await fundedCard(t, tenant, token, 500_000)
  last4 = f.card.last4
  const long = { ...MERCHANT, name: 'The Extraordinarily Long Merchant Name Of A Hotel Group' }
  const approved = (await authorizeRaw(t, token, f.card.id, 12_345, { merchant: long })).json()
  await authorizeRaw(t, token, f.card.id, 4_200, { currency: 'EUR' })
  await authorizeRaw(t, token, f.card.id, 9_999_999)
  const capture = await t.api(token, 'POST', `/v1/simulate/authorizations/${approved.id}/capture`, {
    amount: 12_345,
  })
  assert.equal(capture.statusCode, 201, capture.body)
  const rule = await t.api(token, 'POST', '/v1/authorization_rules', {
    name: 'At most 20 a day on this card',
    scope: { level: 'card', ids: [f.card.id] },
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', limit_count: 20 },
    mode: 'shadow',
  })
  assert.equal(rule.statusCode, 201, rule.body)
  const hook = await t.api(token, 'POST', '/v1/webhook_endpoints', {
    url: 'https://hooks.example.test/a/rather/long/path/for/the/receiver/of/svc/events',
    enabled_events: ['*'],
  })
  assert.equal(hook.statusCode, 201, hook.body)
  origin = await listenOnPort(t)
  browser = await launchChromium({ timeoutMs: 30_000 })
})
after(async () => {
  await browser?.close()
  await t?.close()
})

async function signedIn(width: number, email: string): Promise<Page> {
  const { path } = await invite(t, { email, role: 'owner', organization_id: tenant.organizationId })
  return signedInThroughLink(browser, origin, origin + path, PASSWORD, width)
}

/** The page's width, and the lists whose own content is wider than they are (they would scroll sideways). */
async function widths(page: Page) {
  return page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    scrolling: Array.from(document.querySelectorAll('.table-wrap'))
      .filter((e) => e.scrollWidth > e.clientWidth + 1)
      .map((e) => `${e.getAttribute('aria-label')}: ${e.scrollWidth} > ${e.clientWidth}`),
  }))
}

test('no list overflows at 1,280 px, none at 390 px either, and they name cardholders and cards', {
  skip,
  timeout: 240_000,
}, async () => {
  for (const width of [1280, 390]) {
    const page = await signedIn(width, `lists.${width}@example.test`)
    for (const path of LISTS) {
      const res = await page.goto(origin + path)
      assert.equal(res?.status(), 200, path)
      const w = await widths(page)
      assert.ok(w.page <= width, `${path} is ${w.page}px wide at ${width}px`)
      if (width === 1280) assert.deepEqual(w.scrolling, [], `${path}: lists that scroll sideways`)
      assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], `${path} at ${width}px`)
    }
    await page.goto(`${origin}/console/authorizations`)
    const list = page.getByRole('region', { name: 'Authorizations, newest first' })
    await list
      .getByRole('link', { name: `Visa •••• ${last4}` })
      .first()
      .waitFor()
    await list.getByRole('link', { name: 'Ada Lovelace' }).first().waitFor()
    await screenshot(page, `console-authorizations-${width}.png`, { fullPage: true })
    await page.goto(`${origin}/console/cards`)
    await page
      .getByRole('region', { name: 'Cards, newest first' })
      .getByRole('link', { name: 'Ada Lovelace' })
      .first()
      .waitFor()
    await page.context().close()
  }
})
