import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
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
import { blankProfiles } from '../esim/support.js'

/** The console's operator pages in a real browser (Debian's chromium through playwright-core) at a phone's width, checked with axe-core. */

const EMAIL = 'ops@example.test'
const PASSWORD = 'granite-lighthouse-meadow-17'

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

/** A phone-sized page of this server (`phonePage`). */
function phone(javaScriptEnabled = true) {
  return phonePage(browser, origin, { javaScriptEnabled })
}

/** The page fits the phone: nothing wider than the viewport makes the whole page scroll sideways. */
async function fitsWidth(page: import('playwright-core').Page, what: string): Promise<void> {
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
    `${what}: the page is ${width}px wide at a 390px viewport: ${JSON.stringify(widest)}`,
  )
}

async function checked(page: import('playwright-core').Page, what: string): Promise<void> {
  assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], what)
  await fitsWidth(page, what)
}

test('an operator signs in, creates an organization and a program, registers a client from a pasted JWK Set and reads the system health, on a phone', {
  skip,
  timeout: 180_000,
}, async () => {
  const { context, page, problems, elsewhere } = await phone()
  try {
    const { path } = await invite(t, { email: EMAIL, role: 'operator' })
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.waitForURL(/\/console\/sign-in$/)
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/console`)
    await page.getByRole('heading', { name: 'Operator console', level: 1 }).waitFor()

    // An organization.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Organizations' })
      .click()
    await page.getByRole('heading', { name: 'Organizations', level: 1 }).waitFor()
    await checked(page, 'organizations')
    await page.getByLabel('Name').fill('Stark Industries')
    await page.getByRole('button', { name: 'Create organization' }).click()
    await page.getByRole('heading', { name: 'Stark Industries', level: 1 }).waitFor()
    await page.getByRole('status').filter({ hasText: 'Stark Industries is created' }).waitFor()
    await checked(page, 'an organization')
    const orgId = /organizations\/(org_\w+)/.exec(page.url())![1]

    // A program, from the organization's page.
    await page.getByRole('link', { name: 'Create a program' }).click()
    await page.getByRole('heading', { name: 'Programs', level: 1 }).waitFor()
    await checked(page, 'programs')
    const create = page.getByRole('form', { name: 'Create a program' })
    assert.equal(await create.getByLabel('Organization id').inputValue(), orgId)
    await create.getByLabel('Name').fill('Stark Travel')
    await create.getByLabel('Currencies').fill('USD, EUR')
    await create.getByLabel('Virtual').check()
    await create.getByRole('button', { name: 'Create program' }).click()
    await page.getByRole('status').filter({ hasText: 'Program Stark Travel' }).waitFor()
    assert.ok(await page.getByRole('cell', { name: /Stark Travel/ }).isVisible())

    // A client, by pasting a JWK Set.
    await page.goto(`${origin}/console/operator/organizations/${orgId}`)
    await page.getByRole('link', { name: 'Register a client' }).click()
    await page.getByRole('heading', { name: 'Register an API client', level: 1 }).waitFor()
    await checked(page, 'register a client')
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwks = JSON.stringify(
      { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'stark-2025' }] },
      null,
      2,
    )
    await page.getByLabel('Label').fill('Stark backend')
    await page.getByLabel('Public keys').fill(jwks)
    await page.getByLabel('cards:secrets').check()
    await page.getByLabel('IP allowlist').fill('203.0.113.0/24')
    await page.getByRole('button', { name: 'Register client' }).click()
    await page.getByRole('heading', { name: 'API client: Stark backend', level: 1 }).waitFor()
    await page.getByRole('status').filter({ hasText: 'is registered' }).waitFor()
    assert.ok(await page.getByRole('cell', { name: 'stark-2025' }).isVisible())
    await checked(page, 'a client')
    await page.getByRole('link', { name: 'Revoke this client…' }).click()
    await page.getByRole('heading', { name: 'Revoke Stark backend?' }).waitFor()
    await checked(page, 'revoke confirmation')
    await page.getByRole('link', { name: 'Cancel' }).click()
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Clients' })
      .click()
    await page.getByRole('heading', { name: 'API clients', level: 1 }).waitFor()
    await checked(page, 'clients')

    // A private key pasted by mistake is refused, and the page does not show it back.
    await page.goto(`${origin}/console/operator/clients/new?organization=${orgId}`)
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    await page.getByLabel('Label').fill('Oops')
    await page
      .getByLabel('Public keys')
      .fill(privateKey.export({ type: 'pkcs8', format: 'pem' }) as string)
    await page.getByRole('button', { name: 'Register client' }).click()
    await page.getByRole('alert').filter({ hasText: 'never accepted' }).waitFor()
    assert.equal(await page.getByLabel('Public keys').inputValue(), '')
    await checked(page, 'a refused client')

    // Network policies and eSIM.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Network policies' })
      .click()
    await checked(page, 'network policies')
    await page.getByLabel('Organization id').fill(orgId)
    await page.getByRole('button', { name: 'Show its policies' }).click()
    await page.getByLabel('Sandbox allowlist').fill('198.51.100.0/24')
    await page.getByRole('button', { name: 'Save the sandbox policy' }).click()
    await page.getByRole('status').filter({ hasText: 'Sandbox' }).waitFor()
    await checked(page, "an organization's network policies")

    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'eSIM' })
      .click()
    await page.getByRole('heading', { name: 'eSIM', level: 1 }).waitFor()
    await checked(page, 'eSIM')
    const csv = blankProfiles(2)
      .map((p) => `${p.iccid},${p.smdp_address},${p.matching_id}`)
      .join('\n')
    await page.getByLabel('Profiles (CSV)').fill(csv)
    await page.getByRole('button', { name: 'Load profiles' }).click()
    await page.getByRole('status').filter({ hasText: '2 profiles loaded' }).waitFor()

    // System health.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'System health' })
      .click()
    await page.getByRole('heading', { name: 'System health', level: 1 }).waitFor()
    await page.getByRole('heading', { name: 'Job queue' }).waitFor()
    await page.getByText('Deliveries pending').waitFor()
    await page.getByText('Oldest unsettled').waitFor()
    await screenshot(page, 'console-system-health.png', { fullPage: true })
    await checked(page, 'system health')

    await page.goto(`${origin}/console/audit`)
    for (const action of [
      'organization.created',
      'program.created',
      'client.created',
      'network_policy.updated',
      'esim_inventory.loaded',
    ]) {
      assert.ok(await page.getByRole('cell', { name: action }).first().isVisible(), action)
    }
    assert.deepEqual(elsewhere, [], 'no request to another host')
    assert.deepEqual(problems, [], 'no console errors')
  } finally {
    await context.close()
  }
})

test('the operator forms work without JavaScript', { skip, timeout: 60_000 }, async () => {
  const { context, page } = await phone(false)
  try {
    const email = 'ops.nojs@example.test'
    const { path } = await invite(t, { email, role: 'operator' })
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)
    await page.goto(`${origin}/console/operator/organizations`)
    await page.getByLabel('Name').fill('Wayne Enterprises')
    await page.getByRole('button', { name: 'Create organization' }).click()
    await page.getByRole('heading', { name: 'Wayne Enterprises', level: 1 }).waitFor()
    await page.getByLabel('Email').fill('bruce@example.test')
    await page.getByLabel('Role').selectOption('owner')
    await page.getByRole('button', { name: 'Create invitation link' }).click()
    await page.getByRole('heading', { name: 'Invitation link' }).waitFor()
    assert.match(await page.locator('main code').innerText(), /\/console\/invitations\//)
    await page.goto(`${origin}/console/operator/programs`)
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.getByRole('heading', { name: 'Programs', level: 1 }).waitFor()
  } finally {
    await context.close()
  }
})
