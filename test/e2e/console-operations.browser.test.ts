import assert from 'node:assert/strict'
import { test } from 'node:test'
import type { Page } from 'playwright-core'
import type { TestApp, TestClient } from '../helpers/app.js'
import { invite } from '../console/support.js'
import {
  axeViolations,
  withBrowserTenant,
  screenshot,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The card story in the console, in a real browser: every step is done through the pages (forms and links, no API
 * call of the test's own); after each, what the page shows is compared with the API's view of the same object.
 */

const EMAIL = 'ops.owner@example.test'
const PASSWORD = 'copper-orchard-violin-58'

let t: TestApp
let tenant: TestClient
let token: string
let origin: string
let browser: import('playwright-core').Browser

withBrowserTenant((f) => ({ t, tenant, token, origin, browser } = f))

/** The API's view of an object (the check, not a step). */
async function api(url: string): Promise<any> {
  const res = await t.api(token, 'GET', url)
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`)
  return res.json()
}

async function checked(page: Page, what: string): Promise<void> {
  assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], what)
}

/** The id at the end of the page's address. */
function idOf(page: Page): string {
  return new URL(page.url()).pathname.split('/').pop()!
}

/** The text of a description list's value, by its term. */
async function detail(page: Page, term: string): Promise<string> {
  return (
    await page
      .locator('dl.details > div')
      .filter({ has: page.locator('dt', { hasText: new RegExp(`^${term}$`) }) })
      .locator('dd')
      .innerText()
  ).trim()
}

test('an owner creates a cardholder, reports KYC, opens and credits an account, issues a card, and follows an authorization to a won dispute', {
  skip,
  timeout: 240_000,
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
    const { path } = await invite(t, {
      email: EMAIL,
      role: 'owner',
      organization_id: tenant.organizationId,
    })
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)

    // A cardholder.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Cardholders' })
      .click()
    await page.getByRole('heading', { name: 'Cardholders', level: 1 }).waitFor()
    await checked(page, 'cardholders')
    await page.getByLabel('First name').fill('Grace')
    await page.getByLabel('Last name').fill('Hopper')
    await page.getByLabel('Email', { exact: true }).fill('grace.hopper@example.test')
    await page.getByLabel('Document number').fill('P1234567')
    await page.getByLabel('Street and number').fill('1 Navy Way')
    await page.getByLabel('City').fill('Arlington')
    await page.getByLabel('Postal code').fill('22202')
    await page.getByLabel('Country').fill('USA')
    await page.getByRole('button', { name: 'Create cardholder' }).click()
    await page.getByRole('heading', { name: 'Grace Hopper', level: 1 }).waitFor()
    const cardholderId = idOf(page)
    const created = await api(`/v1/cardholders/${cardholderId}`)
    assert.equal(created.email, 'grace.hopper@example.test')
    assert.equal(await detail(page, 'KYC status'), created.kyc_status.replace(/_/g, ' '))
    await checked(page, 'cardholder')

    // KYC (a sandbox tool).
    await page.getByRole('button', { name: 'Report KYC outcome' }).click()
    await page.getByText('KYC outcome recorded: approved.').waitFor()
    assert.equal((await api(`/v1/cardholders/${cardholderId}`)).kyc_status, 'approved')
    assert.equal(await detail(page, 'KYC status'), 'approved')
    await checked(page, 'cardholder after KYC')

    // An account, credited.
    await page.getByLabel('Program').selectOption({ label: 'Full (USD, EUR)' })
    await page.getByLabel('Currency').selectOption('USD')
    await page.getByRole('button', { name: 'Open account' }).click()
    await page.getByRole('heading', { name: 'Account USD', level: 1 }).waitFor()
    const accountId = idOf(page)
    await page.getByLabel('Amount (USD)').fill('100.00')
    await page.getByRole('button', { name: 'Credit account' }).click()
    await page.getByText('Credited.').waitFor()
    const credited = await api(`/v1/accounts/${accountId}`)
    assert.equal(credited.available_balance, 10_000)
    assert.equal(await detail(page, 'Available'), '$100.00 USD')
    await checked(page, 'account')

    // A card, issued now.
    await page.getByRole('button', { name: 'Issue card' }).click()
    await page.getByText('Card created').waitFor()
    const cardId = idOf(page)
    assert.equal((await api(`/v1/cards/${cardId}`)).account_id, accountId)
    await page.getByRole('button', { name: /Issue now/ }).click()
    await page.getByText('Card issued.').waitFor()
    const card = await api(`/v1/cards/${cardId}`)
    assert.equal(card.status, 'active')
    assert.equal(await detail(page, 'Status'), 'active')
    assert.equal(await detail(page, 'Number'), `•••• •••• •••• ${card.last4}`)
    assert.equal(await detail(page, 'Travel mode'), 'off')
    await checked(page, 'card')

    // An authorization, approved, with its hold on the account.
    await page.locator('#sim-amount').fill('12.50')
    await page.getByLabel('Merchant name').first().fill('Corner Cafe')
    await page.getByRole('button', { name: 'Simulate authorization' }).click()
    await page.getByRole('heading', { name: 'Authorization at Corner Cafe', level: 1 }).waitFor()
    const authorizationId = idOf(page)
    const authorization = await api(`/v1/authorizations/${authorizationId}`)
    assert.equal(authorization.approved, true)
    assert.equal(await detail(page, 'Decision'), 'approved')
    assert.equal(await detail(page, 'Held'), '$12.50 USD')
    assert.ok(
      (await page.locator('a[href^="/console/developers/events/evt_"]').count()) > 0,
      'its events link to the event page',
    )
    await checked(page, 'authorization')
    await screenshot(page, 'console-authorization.png', { fullPage: true })
    await page.locator('dl.details').getByRole('link', { name: accountId }).click()
    await page.getByRole('heading', { name: 'Account USD', level: 1 }).waitFor()
    const held = await api(`/v1/accounts/${accountId}`)
    assert.equal(held.held_balance, 1250)
    assert.equal(await detail(page, 'Held'), '$12.50 USD')
    assert.equal(await detail(page, 'Available'), '$87.50 USD')
    await page
      .getByRole('region', { name: 'Pending authorizations holding money on this account' })
      .getByRole('link', { name: authorizationId })
      .waitFor()
    await checked(page, 'account with a hold')
    await screenshot(page, 'console-account.png', { fullPage: true })

    // Capture, settle, refund.
    await page
      .getByRole('region', { name: 'Pending authorizations holding money on this account' })
      .getByRole('link', { name: authorizationId })
      .click()
    await page.getByRole('button', { name: 'Capture', exact: true }).click()
    await page.getByText(/Captured \$12\.50 USD/).waitFor()
    const captureId = idOf(page)
    assert.equal((await api(`/v1/transactions/${captureId}`)).status, 'pending')
    assert.equal(await detail(page, 'Status'), 'pending')
    await checked(page, 'capture')
    await page.getByRole('button', { name: 'Settle now' }).click()
    await page.getByText('Transaction settled.').waitFor()
    assert.equal((await api(`/v1/transactions/${captureId}`)).status, 'settled')
    assert.equal(await detail(page, 'Status'), 'settled')
    await page.locator('#refund-amount').fill('2.50')
    await page.getByRole('button', { name: 'Refund', exact: true }).click()
    await page.getByText('Refunded $2.50 USD to the account.').waitFor()
    const refund = await api(`/v1/transactions/${idOf(page)}`)
    assert.equal(refund.type, 'refund')
    assert.equal(refund.original_transaction_id, captureId)
    assert.equal((await api(`/v1/transactions/${captureId}`)).refunded_amount, 250)
    await checked(page, 'refund')

    // A dispute, won.
    await page.locator('dl.details').getByRole('link', { name: captureId }).click()
    await page.getByRole('button', { name: 'Open dispute' }).waitFor()
    await page.getByRole('button', { name: 'Open dispute' }).click()
    await page.getByText('Dispute opened for $10.00 USD.').waitFor()
    const disputeId = idOf(page)
    assert.equal((await api(`/v1/disputes/${disputeId}`)).amount, 1000)
    await checked(page, 'dispute')
    await page.getByRole('button', { name: 'Resolve: won' }).click()
    await page.getByText('Dispute won.').waitFor()
    assert.equal((await api(`/v1/disputes/${disputeId}`)).status, 'won')
    assert.equal(await detail(page, 'Status'), 'won')
    const final = await api(`/v1/accounts/${accountId}`)
    assert.equal(final.available_balance, 10_000 - 1250 + 250 + 1000)
    await page.goto(`${origin}/console/cardholders/${cardholderId}`)
    await checked(page, 'cardholder at the end')
    await screenshot(page, 'console-cardholder.png', { fullPage: true })

    // On a phone, the pages fit the width: wide tables scroll inside their own region.
    await page.setViewportSize({ width: 390, height: 844 })
    for (const path of [
      `/console/cardholders/${cardholderId}`,
      `/console/accounts/${accountId}`,
      `/console/cards/${cardId}`,
      `/console/authorizations/${authorizationId}`,
      `/console/transactions/${captureId}`,
      `/console/disputes/${disputeId}`,
      '/console/transactions',
    ]) {
      await page.goto(origin + path)
      const width = await page.evaluate(() => document.documentElement.scrollWidth)
      assert.ok(width <= 390, `${path} is ${width}px wide at 390`)
    }
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
