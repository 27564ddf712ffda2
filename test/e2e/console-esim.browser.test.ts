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
 * The eSIM story in a real browser (Debian's chromium through playwright-core) on the service's real port: an owner
 * orders an eSIM for a cardholder paid from their account, simulates its data usage until the package is depleted,
 * and finds it again by search; each step is checked against the API's view, and every page visited is axe-clean.
 */

const EMAIL = 'esim.owner@example.test'
const PASSWORD = 'copper-orchard-whistle-58'

let t: TestApp
let origin: string
let browser: import('playwright-core').Browser
let token: string
let cardholder: any
let account: any
let pkg: any

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  // The story's setup, through the API: a cardholder with a funded account, stock, and a network that answers at once.
  const tenant = await createTenant(t)
  token = await tenant.token()
  cardholder = await makeCardholder(t, token)
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
  pkg = await packageFor(t, token, 'status=on_sale&region=global', 1)
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

test("an owner orders an eSIM paid from the cardholder's account, uses up its package, and finds it by search", {
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

    // The orders page, empty, then the order form.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'eSIM orders' })
      .click()
    await page.getByRole('heading', { name: 'eSIM orders', level: 1 }).waitFor()
    await checked(page, 'eSIM orders')
    await page.getByRole('link', { name: 'Order an eSIM' }).click()
    await page.getByRole('heading', { name: 'Order an eSIM', level: 1 }).waitFor()
    await page.getByLabel('Coverage', { exact: true }).selectOption('global')
    await page.getByRole('button', { name: 'Find packages' }).click()
    await page.waitForURL(/region=global/)
    await checked(page, 'order form')
    await page.getByRole('combobox', { name: /^Package/ }).selectOption(pkg.id)
    await page.getByLabel('Cardholder id').fill(cardholder.id)
    await page.getByLabel('Pay from account (optional)').fill(account.id)
    const before = (await api(`/v1/accounts/${account.id}`)).available_balance
    await page.getByRole('button', { name: 'Order the eSIM' }).click()
    await page.waitForURL(/\/console\/esims\/esim_[0-9A-Z]+$/)
    const esimId = page.url().split('/').pop()!

    // The eSIM page against the API: the order completed, paid from the account, the package running with its code.
    const esim = await api(`/v1/esim/esims/${esimId}`)
    const order = await api(`/v1/esim/orders/${esim.order_id}`)
    assert.equal(order.status, 'completed')
    assert.equal(order.account_id, account.id)
    assert.equal(order.cardholder_id, cardholder.id)
    assert.equal((await api(`/v1/accounts/${account.id}`)).available_balance, before - order.price)
    await page
      .getByRole('status')
      .filter({ hasText: `eSIM ${esimId} is ready` })
      .waitFor()
    const main = page.getByRole('main')
    await main.getByText(esim.activation_code, { exact: true }).waitFor()
    await main.getByRole('link', { name: cardholder.id }).waitFor()
    await main.getByRole('link', { name: order.id }).first().waitFor()
    const packages = main.getByRole('table', { name: 'Packages on this eSIM, oldest first' })
    await packages.getByText('running').waitFor()
    // Validity with the hours left, and the alerts that apply (the organization's defaults: it has set none).
    const alerts = main.getByRole('region', { name: 'Validity and alerts' })
    assert.match(
      await alerts.locator('#esim-validity').innerText(),
      /^until .+ \([\d,]+ hours left\)$/,
    )
    assert.equal(
      await alerts.locator('#esim-usage-alerts').innerText(),
      "80 %, 100 % (organization's default)",
    )
    assert.equal(
      await alerts.locator('#esim-validity-warnings').innerText(),
      "24 h before the end (organization's default)",
    )
    await checked(page, 'eSIM page')

    // Usage up to the package's volume: the page and the API say depleted.
    await page.getByLabel('Data used in total (MB)').fill(String(pkg.data_mb))
    await page.getByRole('button', { name: 'Report usage' }).click()
    await page.getByRole('status').filter({ hasText: 'Usage recorded' }).waitFor()
    const used = await api(`/v1/esim/esims/${esimId}`)
    assert.equal(used.packages[0].status, 'depleted')
    assert.equal(used.packages[0].data_used_mb, pkg.data_mb)
    await packages.getByText('depleted').waitFor()
    await packages.getByText(`${pkg.data_mb.toLocaleString('en-US')} MB used`).waitFor()
    await main
      .getByRole('table', { name: /Events about this object/ })
      .getByText('esim.depleted')
      .waitFor()
    await checked(page, 'eSIM page after usage')
    await screenshot(page, 'console-esim.png', { fullPage: true })

    // A card of the same cardholder in travel mode on this eSIM: its page shows where the eSIM is.
    const located = await t.api(token, 'POST', `/v1/simulate/esim/esims/${esimId}/location`, {
      country: 'FRA',
    })
    assert.equal(located.statusCode, 200, located.body)
    const created = await t.api(token, 'POST', '/v1/cards', {
      cardholder_id: cardholder.id,
      account_id: account.id,
      form_factor: 'virtual',
      card_type: 'prepaid',
      embossed_name: 'ADA LOVELACE',
      delivery_address: {
        name: 'Ada Lovelace',
        line1: '1 Main St',
        city: 'Springfield',
        postal_code: '12345',
        country: 'USA',
      },
      spending_controls: { allowed_countries: ['USA'] },
      travel_mode: { esim_id: esimId },
    })
    assert.equal(created.statusCode, 201, created.body)
    assert.deepEqual(created.json().travel_mode, { esim_id: esimId, country: 'FRA', active: true })
    await page.goto(`${origin}/console/cards/${created.json().id}`)
    await main.getByRole('link', { name: esimId }).waitFor()
    assert.equal(
      await page.locator('#travel-mode').innerText(),
      "active: eSIM in FRA, allowed besides the card's countries",
    )
    await checked(page, 'card in travel mode')

    // Search from the header: the id goes straight to the eSIM; the email lists the cardholder.
    await page.goto(`${origin}/console`)
    await page
      .getByRole('searchbox', { name: 'Search by id, email, name, last4, ICCID or reference' })
      .fill(esimId)
    await page
      .getByRole('search', { name: 'Search the console' })
      .getByRole('button', { name: 'Search' })
      .click()
    await page.waitForURL(`${origin}/console/esims/${esimId}`)
    await page.getByRole('heading', { name: `eSIM ${esimId}`, level: 1 }).waitFor()
    await page
      .getByRole('searchbox', { name: 'Search by id, email, name, last4, ICCID or reference' })
      .fill(cardholder.email)
    await page
      .getByRole('search', { name: 'Search the console' })
      .getByRole('button', { name: 'Search' })
      .click()
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor()
    await page.getByRole('main').getByRole('link', { name: cardholder.id }).waitFor()
    await checked(page, 'search results')
    // The orders list shows the completed order.
    await page.goto(`${origin}/console/esim/orders`)
    await page.getByRole('main').getByRole('link', { name: order.id }).waitFor()
    await checked(page, 'orders list')
    await page.goto(`${origin}/console/esims`)
    await page.getByRole('main').getByRole('link', { name: esimId }).waitFor()
    assert.equal(
      await page.getByRole('main').getByText(esim.activation_code).count(),
      0,
      'no activation code on the list',
    )
    await checked(page, 'eSIM list')
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
