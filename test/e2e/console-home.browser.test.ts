import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Page } from 'playwright-core'
import { authorizeRaw, fundedCard } from '../authorizations/support.js'
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
  horizontalOverflow,
  launchChromium,
  screenshot,
  seriousOrCritical,
  signedInThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The console's home in pictures (real Chromium, axe-core): authorizations per day with their approval rate,
 * declines by reason, balances held and webhook health, each an SVG with an accessible name and its figures as a
 * table, at 1,280 and 390 px without sideways scrolling.
 */

const PASSWORD = 'harbour-lantern-quartz-73'

let t: TestApp
let tenant: TestClient
let origin: string
let browser: import('playwright-core').Browser

before(async () => {
  if (skip) return
  t = await startTestApp()
  tenant = await createTenant(t)
  const token = await tenant.token()
  const f = await fundedCard(t, tenant, token, 10_000)
  // Three approved (2,500 held of 10,000) and two declined over the balance.
  for (const amount of [1_000, 1_000, 500])
    assert.equal((await authorizeRaw(t, token, f.card.id, amount)).statusCode, 201)
  const over = (await authorizeRaw(t, token, f.card.id, 50_000)).json()
  assert.equal(over.decline_reason, 'insufficient_funds')
  const again = (await authorizeRaw(t, token, f.card.id, 60_000)).json()
  assert.equal(again.decline_reason, 'insufficient_funds')
  const hook = await t.api(token, 'POST', '/v1/webhook_endpoints', {
    url: 'https://hooks.example.test/svc',
    enabled_events: ['card.created'],
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
  const { path } = await invite(t, {
    email,
    role: 'viewer',
    organization_id: tenant.organizationId,
  })
  return signedInThroughLink(browser, origin, origin + path, PASSWORD, width)
}

async function noSidewaysScroll(page: Page, width: number): Promise<void> {
  const { scrollWidth } = await horizontalOverflow(page)
  assert.ok(scrollWidth <= width, `the home is ${scrollWidth}px wide at ${width}px`)
}

test('the home shows the activity as pictures with tables, at 1,280 and 390 px', {
  skip,
  timeout: 120_000,
}, async () => {
  const page = await signedIn(1280, 'home.viewer@example.test')
  await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
  for (const name of [
    'Authorizations per day, approved and declined, last 30 days',
    'Declines by reason, last 30 days',
    'Balances of open accounts by currency: available and on hold',
    'Webhook deliveries by endpoint, last 7 days',
  ])
    await page.getByRole('img', { name }).waitFor()

  const volume = page.getByRole('region', { name: 'Authorizations, last 30 days' })
  assert.match(await volume.innerText(), /5 authorizations in 30 days, 60 % approved \(\$25\.00\)/)
  await volume.getByText('the figures as a table').click()
  const today = new Date().toISOString().slice(0, 10)
  const row = volume.getByRole('row', { name: new RegExp(today) })
  assert.deepEqual(
    (await row.getByRole('cell').allInnerTexts()).map((s) => s.trim()),
    [today, '3', '2', '60 %'],
  )

  const declines = page.getByRole('region', { name: 'Declines by reason, last 30 days' })
  assert.match(await declines.innerText(), /2 declines; the most: insufficient_funds \(100 %\)/)

  const balances = page.getByRole('region', { name: 'Balances held' })
  assert.match(await balances.innerText(), /\$100\.00 in 1 account, \$25\.00 on hold/)

  const hooks = page.getByRole('region', { name: 'Webhook health, last 7 days' })
  assert.match(await hooks.innerText(), /1 endpoint, 0 failing or disabled/)

  await noSidewaysScroll(page, 1280)
  assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'home at 1,280 px')
  await screenshot(page, 'console-home-activity.png', { fullPage: true })

  const phone = await signedIn(390, 'home.phone@example.test')
  await phone.getByRole('img', { name: 'Declines by reason, last 30 days' }).waitFor()
  await noSidewaysScroll(phone, 390)
  assert.deepEqual(seriousOrCritical(await axeViolations(phone)), [], 'home at 390 px')
})
