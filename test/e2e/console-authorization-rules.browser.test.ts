import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { cardBody, issuedCard, makeAccount, makeCardholder, runJobs } from '../cards/support.js'
import { createTenant, listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { invite } from '../console/support.js'
import {
  axeViolations,
  horizontalOverflow,
  launchChromium,
  screenshot,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The authorization rules pages in a real browser (Debian's chromium through playwright-core): an owner makes a
 * velocity limit for a card in shadow, sees the authorization it would have declined on its page, turns it active,
 * sees its decline, and deletes it through its confirmation page; each step is checked against the API, and every
 * page is axe-clean and no wider than the screen at 1,280 px and at 390 px.
 */

const PASSWORD = 'juniper-lattice-signal-71'

let t: TestApp
let origin: string
let browser: Browser
let token: string
let card: any
let invitation: string

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  const tenant = await createTenant(t)
  token = await tenant.token()
  const cardholder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, cardholder.id)
  card = await issuedCard(t, token, cardBody(cardholder.id, account.id))
  const credit = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 50_000 })
  assert.equal(credit.statusCode, 200, credit.body)
  const { path } = await invite(t, {
    email: 'rules.owner@example.test',
    role: 'owner',
    organization_id: tenant.organizationId,
  })
  invitation = path
  browser = await launchChromium({ timeoutMs: 30_000 })
})
after(async () => {
  await browser?.close()
  await t?.close()
})

async function checked(page: Page, what: string): Promise<void> {
  assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], what)
  const { scrollWidth, viewport } = await horizontalOverflow(page)
  assert.ok(scrollWidth <= viewport, `${what}: ${scrollWidth} px wide in a ${viewport} px viewport`)
}

/** No table of the page scrolls sideways (at 1,280 px every column of these pages fits). */
async function tablesFit(page: Page, what: string): Promise<void> {
  const wide = await page.evaluate(() =>
    Array.from(document.querySelectorAll('.table-wrap'))
      .filter((e) => e.scrollWidth > e.clientWidth)
      .map((e) => e.getAttribute('aria-label')),
  )
  assert.deepEqual(wide, [], `${what}: tables wider than the page`)
}

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await t.api(token, method, path, body)
  assert.ok(res.statusCode < 300, `${method} ${path}: ${res.statusCode} ${res.body}`)
  return res.json()
}

const spend = (amount: number) =>
  api('POST', '/v1/simulate/authorizations', {
    card_id: card.id,
    amount,
    currency: 'USD',
    merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
  })

test('an owner makes a shadow velocity limit, reads what it would decline, turns it on, and deletes it', {
  skip,
  timeout: 240_000,
}, async () => {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
    bypassCSP: true,
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (e) => problems.push(e.message))
  try {
    await setPasswordThroughLink(page, origin + invitation, PASSWORD)
    await page.waitForURL(`${origin}/console`)

    // The list, empty, from the navigation; then the form of a velocity limit.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Authorization rules' })
      .click()
    await page.getByRole('heading', { name: 'Authorization rules', level: 1 }).waitFor()
    await page.getByText('No rule yet.').waitFor()
    await checked(page, 'rules list (empty)')
    await page.getByRole('link', { name: 'Create a rule' }).click()
    await page.getByRole('heading', { name: 'New rule: velocity limit', level: 1 }).waitFor()
    await checked(page, 'new velocity limit')
    await page.getByLabel(/^Name/).fill('Two purchases a day')
    await page.getByLabel(/^Their ids/).fill(card.id)
    await page.getByLabel(/^Window/).selectOption('rolling')
    await page.getByLabel(/^Rolling window length/).fill('86400')
    await page.getByLabel(/^At most this many approved authorizations/).fill('2')
    await page.getByRole('button', { name: 'Create rule' }).click()
    await page.getByRole('status').filter({ hasText: 'Rule created (shadow)' }).waitFor()
    const ruleId = /arl_[0-9A-Z]{26}/.exec(page.url())![0]
    const rule = await api('GET', `/v1/authorization_rules/${ruleId}`)
    assert.equal(rule.mode, 'shadow')
    assert.deepEqual(rule.parameters.window, { type: 'rolling', seconds: 86400 })
    assert.equal(rule.parameters.limit_count, 2)
    await checked(page, 'rule page')

    // Three authorizations: the third is what the rule would have declined, listed on its page.
    await spend(1000)
    await spend(1100)
    const third = await spend(1200)
    assert.equal(third.approved, true)
    await page.reload()
    const decisions = page.getByRole('region', {
      name: 'Latest authorizations this rule declined or would have declined',
    })
    await decisions.locator(`a[href="/console/authorizations/${third.id}"]`).waitFor()
    await decisions.getByText('would decline').waitFor()
    await checked(page, 'rule page with its decisions')
    await tablesFit(page, 'rule page with its decisions')
    await screenshot(page, 'console-authorization-rule.png', { fullPage: true })

    // Turned on: the next one is declined by the rule.
    await page.getByLabel(/^Mode/).selectOption('active')
    await page.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('status').filter({ hasText: 'Rule saved' }).waitFor()
    assert.equal((await api('GET', `/v1/authorization_rules/${ruleId}`)).mode, 'active')
    const fourth = await spend(1300)
    assert.equal(fourth.decline_reason, 'rule_declined')
    assert.equal(fourth.rule_id, ruleId)
    await page.reload()
    await decisions.locator(`a[href="/console/authorizations/${fourth.id}"]`).waitFor()
    await decisions.getByText('declined', { exact: true }).waitFor()

    // A backtest of the last 30 days (the form's default window), run by the job: the results are the API's.
    await page.getByRole('button', { name: 'Run backtest' }).click()
    await page.getByRole('status').filter({ hasText: 'Backtest queued' }).waitFor()
    await runJobs(t)
    await page.reload()
    const [backtest] = (await api('GET', `/v1/authorization_rules/${ruleId}/backtests`)).data
    assert.equal(backtest.status, 'completed')
    const backtests = page.getByRole('region', { name: "This rule's backtests, newest first" })
    await backtests.getByText('completed').waitFor()
    await backtests
      .getByRole('cell', { name: String(backtest.results.evaluated), exact: true })
      .first()
      .waitFor()
    await checked(page, 'rule page with a backtest')
    await tablesFit(page, 'rule page with a backtest')

    // The other types' forms.
    await page.goto(`${origin}/console/authorization-rules/new?type=condition`)
    await page.getByRole('group', { name: 'Condition 1' }).waitFor()
    await checked(page, 'new condition')
    await page.goto(`${origin}/console/authorization-rules/new?type=merchant_lock`)
    await page.getByRole('group', { name: 'Merchant 1' }).waitFor()
    await checked(page, 'new merchant lock')

    // The card page lists the rule; the list shows it.
    await page.goto(`${origin}/console/cards/${card.id}`)
    await page
      .getByRole('region', { name: 'Rules that apply to this card' })
      .getByRole('link', { name: 'Two purchases a day' })
      .waitFor()
    const remaining = page.getByRole('region', {
      name: 'What is left of each limit on this card, now',
    })
    await remaining.getByRole('link', { name: 'Two purchases a day' }).waitFor()
    await remaining.getByText('3 of 2 authorizations').waitFor()
    await checked(page, 'card page')
    await tablesFit(page, 'card page')
    await page.goto(`${origin}/console/authorization-rules`)
    await page.getByRole('main').getByRole('link', { name: 'Two purchases a day' }).waitFor()
    await checked(page, 'rules list')
    await tablesFit(page, 'rules list')

    // The same pages on a phone.
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      locale: 'en-GB',
      bypassCSP: true,
    })
    try {
      await phone.addCookies(await context.cookies())
      const small = await phone.newPage()
      for (const p of [
        '/console/authorization-rules',
        `/console/authorization-rules/${ruleId}`,
        `/console/authorization-rules/${ruleId}/delete`,
        '/console/authorization-rules/new?type=velocity_limit',
        '/console/authorization-rules/new?type=condition',
        '/console/authorization-rules/new?type=merchant_lock',
        `/console/cards/${card.id}`,
        `/console/authorizations/${fourth.id}`,
      ]) {
        const res = await small.goto(origin + p)
        assert.equal(res?.status(), 200, p)
        await checked(small, `${p} on a phone`)
      }
    } finally {
      await phone.close()
    }

    // Deleting asks first, on a page of its own.
    await page.goto(`${origin}/console/authorization-rules/${ruleId}`)
    await page.getByRole('link', { name: 'Delete this rule…' }).click()
    await page.getByRole('heading', { name: 'Delete rule “Two purchases a day”?' }).waitFor()
    await checked(page, 'delete confirmation')
    await page.getByRole('button', { name: 'Delete rule' }).click()
    await page.getByRole('status').filter({ hasText: 'Rule deleted' }).waitFor()
    await page.getByText('No rule yet.').waitFor()
    assert.equal((await t.api(token, 'GET', `/v1/authorization_rules/${ruleId}`)).statusCode, 404)
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})
