import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createTenant, listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { makeCardholder } from '../cards/support.js'
import { invite } from '../console/support.js'
import {
  axeViolations,
  launchChromium,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The console's search in Chromium: a name typed in the top bar lists every cardholder so named, each linked to
 * its page; axe-core finds no serious violation, at a desktop's width and a phone's.
 */

const PASSWORD = 'pewter-orchard-signal-31'

let t: TestApp
let origin: string
let browser: import('playwright-core').Browser

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  browser = await launchChromium({ timeoutMs: 30_000 })
})
after(async () => {
  await browser?.close()
  await t?.close()
})

test('a name in the top bar lists every match, linked', { skip, timeout: 120_000 }, async () => {
  const tenant = await createTenant(t)
  const token = await tenant.token()
  const first = await makeCardholder(t, token)
  const second = await makeCardholder(t, token)
  const { path } = await invite(t, {
    email: 'searcher@example.test',
    role: 'viewer',
    organization_id: tenant.organizationId,
  })
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    bypassCSP: true,
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  try {
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)
    await page
      .getByRole('searchbox', { name: 'Search by id, email, name, last4, ICCID or reference' })
      .fill('ada lovelace')
    await page.getByRole('search', { name: 'Search the console' }).getByRole('button').click()
    await page.getByRole('table').waitFor()
    for (const c of [first, second])
      assert.equal(await page.getByRole('link', { name: c.id }).count(), 1, c.id)
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'search results')
    await page.setViewportSize({ width: 390, height: 844 })
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'search results at 390px')
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(width <= 390, `the page is ${width}px wide at 390px`)
    await page.getByRole('link', { name: first.id }).click()
    await page.waitForURL(`${origin}/console/cardholders/${first.id}`)
  } finally {
    await context.close()
  }
})
