import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, Frame, Page } from 'playwright-core'
import { formatMoney } from '../../src/lib/money-format.js'
import { createTenant, listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'
import { authorize } from '../authorizations/support.js'
import {
  axeViolations,
  horizontalOverflow,
  launchChromium,
  screenshot,
  seriousOrCritical,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The traveller page (docs/traveller-page.md) in a real browser, at a phone's width (390 px) and a laptop's
 * (1,280 px): the masked card, a payment in euros with both amounts, the balance, freeze and unfreeze by the
 * cardholder, and the card's details in the hosted frame. `SCREENSHOTS=1` writes docs/screenshots/traveller-*.png.
 */

let t: TestApp
let origin: string
let token: string
let holder: any
let account: any
let card: any
let euroTxn: any
let browser: Browser

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  const tenant = await createTenant(t)
  token = await tenant.token()
  holder = await makeCardholder(t, token)
  account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const credit = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
    amount: 50_000,
  })
  assert.equal(credit.statusCode, 200, credit.body)
  card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const pinned = await t.api(token, 'PUT', '/v1/simulate/fx_rates/EUR/USD', { rate: '1.1' })
  assert.equal(pinned.statusCode, 200, pinned.body)
  const auth = await authorize(t, token, card.id, 4_000, {
    currency: 'EUR',
    merchant: { name: 'Café de Flore', mcc: '5814', city: 'Paris', country: 'FRA' },
  })
  const captured = await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, {})
  assert.equal(captured.statusCode, 201, captured.body)
  euroTxn = captured.json()
  browser = await launchChromium()
})
after(async () => {
  await browser?.close()
  await t?.close()
})

async function travellerLink(): Promise<string> {
  const res = await t.api(token, 'POST', '/v1/esim/h5_links', {
    cardholder_id: holder.id,
    sections: ['cards', 'balance', 'esims'],
  })
  assert.equal(res.statusCode, 201, res.body)
  return origin + new URL(res.json().url).pathname
}

async function open(width: number) {
  const context = await browser.newContext({
    viewport: { width, height: width < 600 ? 844 : 900 },
    isMobile: width < 600,
    hasTouch: width < 600,
    locale: 'en-GB',
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  return { context, page, problems }
}

async function noOverflowOrSeriousViolation(page: Page, where: string): Promise<void> {
  const { scrollWidth, viewport } = await horizontalOverflow(page)
  assert.ok(scrollWidth <= viewport, `${where}: ${scrollWidth}px wide in a ${viewport}px viewport`)
  assert.deepEqual(
    seriousOrCritical(await axeViolations(page)),
    [],
    `${where}: no serious or critical accessibility violations (axe-core)`,
  )
}

async function detailsFrame(page: Page): Promise<Frame> {
  const handle = await page.locator('iframe.reveal-frame').elementHandle()
  const frame = await handle?.contentFrame()
  assert.ok(frame, 'the details frame is there')
  return frame
}

for (const width of [390, 1280]) {
  test(`at ${width} px the traveller sees the masked card, a euro payment with both amounts and the balance, and freezes and unfreezes the card`, {
    skip,
    timeout: 120_000,
  }, async () => {
    const { context, page, problems } = await open(width)
    try {
      const response = await page.goto(await travellerLink())
      assert.equal(response?.status(), 200)
      await page
        .getByRole('heading', { name: /Hi Ada, here is everything for your trip/ })
        .waitFor()
      const block = page.locator(`[data-card-id="${card.id}"]`)
      await block
        .getByRole('heading', { name: new RegExp(`^\\w[\\w ]* •••• ${card.last4}$`) })
        .waitFor()
      assert.match(await block.innerText(), /Expires \d{2}\/\d{4}/)
      assert.match(await block.innerText(), /Active/)

      const payment = block.locator(`[data-transaction-id="${euroTxn.id}"]`)
      const paid = await payment.innerText()
      assert.match(paid, /Café de Flore/)
      assert.ok(paid.includes(formatMoney(euroTxn.merchant_amount, 'EUR')), paid)
      assert.ok(paid.includes(formatMoney(euroTxn.amount, euroTxn.currency)), paid)

      const balance = page.locator(`[data-account-id="${account.id}"]`)
      const available = (await t.api(token, 'GET', `/v1/accounts/${account.id}`)).json()
      assert.ok(
        (await balance.innerText()).includes(formatMoney(available.available_balance, 'USD')),
      )
      await screenshot(page, `traveller-${width}.png`, { fullPage: true })
      await noOverflowOrSeriousViolation(page, `${width} px`)

      await block.getByRole('button', { name: 'Freeze card' }).click()
      await page.getByRole('status').filter({ hasText: 'Your card is frozen' }).waitFor()
      assert.match(await block.innerText(), /Frozen/)
      assert.equal((await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().status, 'frozen')
      await screenshot(page, `traveller-frozen-${width}.png`)

      await block.getByRole('button', { name: 'Unfreeze card' }).click()
      await page.getByRole('status').filter({ hasText: 'Your card is active again' }).waitFor()
      assert.equal((await t.api(token, 'GET', `/v1/cards/${card.id}`)).json().status, 'active')
      assert.deepEqual(problems, [], 'no console errors (a CSP violation would show here)')
    } finally {
      await context.close()
    }
  })
}

test('"Show details" shows the number in the hosted frame only; the page itself never holds it', {
  skip,
  timeout: 120_000,
}, async () => {
  const { context, page, problems } = await open(390)
  try {
    await page.goto(await travellerLink())
    const block = page.locator(`[data-card-id="${card.id}"]`)
    await block.getByRole('button', { name: 'Show details' }).click()
    const frame = await detailsFrame(page)
    await frame.getByText('Card number', { exact: true }).waitFor()
    const number = (await frame.locator('#value-number').innerText()).replace(/\s/g, '')
    assert.match(number, new RegExp(`^\\d{12,15}${card.last4}$`))
    const parent = await page.content()
    assert.equal(parent.replace(/\s/g, '').includes(number), false, 'not in the page itself')
    await screenshot(page, 'traveller-details.png')
    await noOverflowOrSeriousViolation(page, 'details shown')
    assert.deepEqual(problems, [], 'no console errors (a CSP violation would show here)')
  } finally {
    await context.close()
  }
})
