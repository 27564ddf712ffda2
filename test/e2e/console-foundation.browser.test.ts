import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import {
  axeViolations,
  launchChromium,
  phonePage,
  screenshot,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'
import { invite } from '../console/support.js'

/** The console's first pages in a real browser (Debian's chromium through playwright-core) at a phone's width, checked with axe-core. */

const PASSWORD = 'lilac-compass-orchard-64'

let t: TestApp
let origin: string
let orgId: string
let browser: import('playwright-core').Browser

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Wonka Industries' })).id
  browser = await launchChromium({ timeoutMs: 30_000 })
})
after(async () => {
  await browser?.close()
  await t?.close()
})

/** A phone-sized page of this server (`phonePage`). */
function phone() {
  return phonePage(browser, origin)
}

/** The page fits the phone: nothing wider than the viewport makes the whole page scroll sideways. */
async function fitsWidth(page: import('playwright-core').Page): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  const widest = await page.evaluate(() =>
    Array.from(document.querySelectorAll('body *'))
      .map(
        (e) =>
          [`${e.tagName}.${e.className}`, Math.round(e.getBoundingClientRect().right)] as const,
      )
      .filter(([, r]) => r > 390)
      .slice(0, 5),
  )
  assert.ok(
    width <= 390,
    `the page is ${width}px wide at a 390px viewport: ${JSON.stringify(widest)}`,
  )
}

test('invitation → password → home on a phone: legible at 390 px, no request elsewhere, no serious or critical axe violation', {
  skip,
  timeout: 120_000,
}, async () => {
  const { context, page, problems, elsewhere } = await phone()
  try {
    const { path } = await invite(t, {
      email: 'charlie@example.test',
      role: 'owner',
      organization_id: orgId,
    })
    const response = await page.goto(origin + path)
    assert.equal(response?.status(), 200)
    await page.getByRole('heading', { name: 'Set your password' }).waitFor()
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'invitation page')
    await fitsWidth(page)

    // A common password is refused on the page itself, with the reason.
    await page.getByLabel('New password').fill('password12345')
    await page.getByLabel('Repeat the password').fill('password12345')
    await page.getByRole('button', { name: 'Set password and sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'too common' }).waitFor()

    await page.getByLabel('New password').fill(PASSWORD)
    await page.getByLabel('Repeat the password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Set password and sign in' }).click()
    await page.waitForURL(`${origin}/console`)
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    assert.match(await page.locator('header').innerText(), /Wonka Industries/)
    await page.getByRole('status').filter({ hasText: 'Your password is set' }).waitFor()
    assert.ok(
      await page
        .getByRole('navigation', { name: 'Console' })
        .getByRole('link', { name: 'Team' })
        .isVisible(),
    )
    await screenshot(page, 'console-home.png', { fullPage: true })
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'home page')
    await fitsWidth(page)

    // The environment switch is a plain form: no script needed.
    await page.getByRole('button', { name: 'Production' }).click()
    await page.waitForURL(`${origin}/console`)
    assert.equal(
      await page.getByRole('button', { name: 'Production' }).getAttribute('aria-pressed'),
      'true',
    )

    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/\/console\/sign-in$/)
    await page.getByRole('heading', { name: 'Sign in' }).waitFor()
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'sign-in page')
    await fitsWidth(page)

    await page.getByLabel('Email').fill('charlie@example.test')
    await page.getByLabel('Password').fill('not-the-right-one-0')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'not right' }).waitFor()
    assert.deepEqual(
      seriousOrCritical(await axeViolations(page)),
      [],
      'sign-in page with its error',
    )
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/console`)

    for (const path of ['/console/account', '/console/team', '/console/audit']) {
      await page.goto(origin + path)
      assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], path)
      await fitsWidth(page)
    }
    assert.deepEqual(elsewhere, [], 'no request to another host')
    assert.deepEqual(problems, [], 'no console errors')
  } finally {
    await context.close()
  }
})

test('the pages work without JavaScript', { skip, timeout: 60_000 }, async () => {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    javaScriptEnabled: false,
  })
  context.setDefaultTimeout(15_000)
  try {
    const page = await context.newPage()
    const { path } = await invite(t, {
      email: 'nojs@example.test',
      role: 'viewer',
      organization_id: orgId,
    })
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)
    await page.getByRole('heading', { name: 'Home', level: 1 }).waitFor()
    assert.equal(
      await page.getByRole('link', { name: 'Team' }).count(),
      0,
      'a viewer is not shown the team',
    )
  } finally {
    await context.close()
  }
})
