import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Page } from 'playwright-core'
import { createTenant, listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { makeAccount, makeCardholder } from '../cards/support.js'
import { invite } from '../console/support.js'
import { blankProfiles, packageFor } from '../esim/support.js'
import {
  axeViolations,
  launchChromium,
  screenshot,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * Auto top-up on the console's eSIM page, in a real browser: an owner turns it on for an eSIM (the add-on, the
 * cardholder's account, a 90 % threshold, a monthly cap), sees a refusal in words, watches the sandbox usage report
 * buy the top-up, and turns it off; each step is checked against the API, and every state of the page is axe-clean.
 */

const EMAIL = 'esim.auto.owner@example.test'
const PASSWORD = 'amber-lantern-harbour-71'

let t: TestApp
let origin: string
let browser: import('playwright-core').Browser
let token: string
let account: any
let esimId: string
let volume: number

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  const tenant = await createTenant(t)
  token = await tenant.token()
  const cardholder = await makeCardholder(t, token)
  account = await makeAccount(t, token, tenant.programs.full.id, cardholder.id)
  const credit = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
    amount: 100_000,
  })
  assert.equal(credit.statusCode, 200, credit.body)
  assert.equal(
    (await t.api(token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })).statusCode,
    200,
  )
  await t.operator('POST', '/operator/v1/esim/inventory', { profiles: blankProfiles(2) })
  const pkg = await packageFor(t, token, 'country=DEU&region=local', 5 * 1024)
  const order = await t.api(token, 'POST', '/v1/esim/orders', {
    package_id: pkg.id,
    cardholder_id: cardholder.id,
    reference: 'auto-top-up-browser',
  })
  assert.equal(order.statusCode, 201, order.body)
  esimId = order.json().esim_id
  volume = pkg.data_mb
  const { path } = await invite(t, {
    email: EMAIL,
    role: 'owner',
    organization_id: tenant.organizationId,
  })
  browser = await launchChromium({ timeoutMs: 30_000 })
  const page = await browser.newPage()
  await setPasswordThroughLink(page, origin + path, PASSWORD)
  await page.waitForURL(`${origin}/console`)
  await page.context().close()
})
after(async () => {
  await browser?.close()
  await t?.close()
})

async function checked(page: Page, what: string): Promise<void> {
  assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], what)
}

async function api(path: string): Promise<any> {
  const res = await t.api(token, 'GET', path)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

test('an owner turns auto top-up on for an eSIM, sees it buy a top-up at 90 %, and turns it off', {
  skip,
  timeout: 180_000,
}, async () => {
  const context = await browser.newContext({
    viewport: { width: 1100, height: 900 },
    locale: 'en-GB',
    bypassCSP: true,
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(e.message))
  try {
    await page.goto(`${origin}/console/sign-in`)
    await page.getByLabel('Email').fill(EMAIL)
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${origin}/console`)

    await page.goto(`${origin}/console/esims/${esimId}`)
    const section = page.getByRole('region', { name: 'Auto top-up' })
    await section.getByText('Off: no data is added on its own.').waitFor()
    await checked(page, 'eSIM page, auto top-up off')

    // A percentage out of range is refused in words, beside the form, and nothing is set.
    const form = page.getByRole('form', { name: 'Set auto top-up' })
    await form.getByLabel('Pay from account').fill(account.id)
    await form.getByLabel('When', { exact: true }).selectOption('threshold')
    await form.getByLabel('Percentage of the package').fill('0')
    await form.getByLabel('At most per month').fill('2')
    await form.getByRole('button', { name: 'Save auto top-up' }).click()
    await page.getByRole('alert').filter({ hasText: 'percentage' }).waitFor()
    assert.equal((await api(`/v1/esim/esims/${esimId}`)).auto_top_up, null)
    await checked(page, 'eSIM page, auto top-up refused')

    await form.getByLabel('Percentage of the package').fill('90')
    await form.getByRole('button', { name: 'Save auto top-up' }).click()
    await page.getByRole('status').filter({ hasText: 'Auto top-up is on' }).waitFor()
    const set = (await api(`/v1/esim/esims/${esimId}`)).auto_top_up
    assert.equal(set.account_id, account.id)
    assert.equal(set.trigger, 'threshold')
    assert.equal(set.threshold_pct, 90)
    assert.equal(set.max_per_month, 2)
    await section.getByText('when usage crosses 90 % of the running package').waitFor()
    await section.getByText('0 of at most 2').waitFor()
    await checked(page, 'eSIM page, auto top-up on')

    // Usage past 90 %: the sandbox report buys the add-on before answering.
    const before = (await api(`/v1/accounts/${account.id}`)).available_balance
    await page.getByLabel('Data used in total (MB)').fill(String(Math.ceil(volume * 0.95)))
    await page.getByRole('button', { name: 'Report usage' }).click()
    await page.getByRole('status').filter({ hasText: 'Usage recorded' }).waitFor()
    const esim = await api(`/v1/esim/esims/${esimId}`)
    assert.equal(esim.packages.length, 2)
    assert.equal(esim.packages[1].top_up_id, set.top_up_id)
    const [auto] = (await api('/v1/esim/orders?trigger=auto')).data
    assert.equal(auto.esim_id, esimId)
    assert.equal(
      (await api(`/v1/accounts/${account.id}`)).available_balance,
      before - auto.charged_amount,
    )
    await section.getByText('1 of at most 2').waitFor()
    const packages = page.getByRole('table', { name: 'Packages on this eSIM, oldest first' })
    await packages.getByRole('link', { name: auto.id }).waitFor()
    await checked(page, 'eSIM page after the auto top-up')
    await screenshot(page, 'console-esim-auto-top-up.png', { fullPage: true })

    await page.getByRole('button', { name: 'Turn auto top-up off' }).click()
    await page.getByRole('status').filter({ hasText: 'Auto top-up is off' }).waitFor()
    assert.equal((await api(`/v1/esim/esims/${esimId}`)).auto_top_up, null)
    await section.getByText('Off: no data is added on its own.').waitFor()
    await checked(page, 'eSIM page, auto top-up turned off')
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
