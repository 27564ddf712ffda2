import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { invite } from '../console/support.js'
import {
  axeViolations,
  launchChromium,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * A form sent after the session ended, in Chromium: the person signs in again and is back on the page they were
 * on, with the URL, description and ticked events they had typed filled in by the page's own script (under the
 * console's CSP), the password field of the sign-in empty; axe-core finds no serious violation.
 */

const PASSWORD = 'copper-meadow-lantern-58'
const WEBHOOKS = '/console/developers/webhooks'

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

type Page = import('playwright-core').Page

/** Types into the add-endpoint form, lets the session end, sends it, and signs in again. */
async function typeThenExpire(page: Page, email: string): Promise<void> {
  await page.goto(origin + WEBHOOKS)
  await page.getByLabel('URL').fill('https://hooks.example.com/after-lunch')
  await page.getByLabel('Description (optional)').fill('Typed before lunch')
  await page.getByLabel('card.issued').check()
  t.clock.advance(31 * 60 * 1000)
  await page.getByRole('button', { name: 'Add endpoint' }).click()
  await page.waitForURL(/sign-in/)
  assert.equal(page.url(), `${origin}/console/sign-in?next=${encodeURIComponent(WEBHOOKS)}`)
  await page.getByText('Your session has ended').waitFor()
  await page.getByLabel('Email').fill(email)
  await page.getByLabel('Password').fill(PASSWORD)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(origin + WEBHOOKS)
}

test('after signing in again the person is back on the form with what they typed', {
  skip,
  timeout: 180_000,
}, async () => {
  const orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Pied' })).id
  const email = 'monica@example.test'
  const { path } = await invite(t, { email, role: 'owner', organization_id: orgId })

  // The console's CSP as served: the refill is the page's own script.
  const strict = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  strict.setDefaultTimeout(15_000)
  const page = await strict.newPage()
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  try {
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)
    await typeThenExpire(page, email)
    await page.getByText('what you typed is filled in again').waitFor()
    assert.equal(await page.getByLabel('URL').inputValue(), 'https://hooks.example.com/after-lunch')
    assert.equal(await page.getByLabel('Description (optional)').inputValue(), 'Typed before lunch')
    assert.equal(await page.getByLabel('card.issued').isChecked(), true)
    assert.deepEqual(problems, [], 'no CSP violation or script error')
    // Sent again, it is added.
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await page.getByText('https://hooks.example.com/after-lunch').first().waitFor()
    const endpoints = await t.deps.db
      .selectFrom('webhook_endpoints')
      .select('url')
      .where('organization_id', '=', orgId)
      .execute()
    assert.deepEqual(
      endpoints.map((e) => e.url),
      ['https://hooks.example.com/after-lunch'],
    )
  } finally {
    await strict.close()
  }

  // axe runs with the CSP bypassed (its script is injected), on the page as refilled.
  const relaxed = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    bypassCSP: true,
  })
  relaxed.setDefaultTimeout(15_000)
  try {
    const again = await relaxed.newPage()
    await again.goto(`${origin}/console/sign-in`)
    await again.getByLabel('Email').fill(email)
    await again.getByLabel('Password').fill(PASSWORD)
    await again.getByRole('button', { name: 'Sign in' }).click()
    await again.waitForURL(`${origin}/console`)
    await typeThenExpire(again, email)
    await again.getByText('what you typed is filled in again').waitFor()
    assert.deepEqual(seriousOrCritical(await axeViolations(again)), [], 'the refilled page')
  } finally {
    await relaxed.close()
  }
})
