import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ADDRESS, attest } from '../cards/support.js'
import { invite } from '../console/support.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import {
  axeViolations,
  horizontalOverflow,
  withBrowserTenant,
  seriousOrCritical,
  signedInThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The sandbox clocks pages in Chromium, through accessible names: the navigation leads to the list, the list to a
 * clock with its cardholders, the clock is advanced by a duration and deleted after a confirmation page of its own;
 * the cardholder's page names its clock, linked; a viewer sees no control. axe-core finds no serious violation and
 * nothing scrolls sideways, at 1,280 and 390 px.
 */

const PASSWORD = 'amber-sundial-harbour-57'

let t: TestApp
let tenant: TestClient
let token: string
let origin: string
let browser: import('playwright-core').Browser

withBrowserTenant((f) => ({ t, tenant, token, origin, browser } = f))

async function clockWithHolder(name: string) {
  const clock = (await t.api(token, 'POST', '/v1/simulate/clocks', { name })).json()
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Clementine',
    last_name: 'Clock',
    email: `clementine.${Date.now()}.${Math.random()}@example.com`,
    address: ADDRESS,
    clock_id: clock.id,
  })
  assert.equal(res.statusCode, 201, res.body)
  await attest(t, token, res.json().id, 'approved', true)
  return { clock, holder: res.json() }
}

async function checkPage(page: import('playwright-core').Page, label: string) {
  for (const width of [1280, 390]) {
    await page.setViewportSize({ width, height: 900 })
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], `${label} at ${width}px`)
    const { scrollWidth, viewport } = await horizontalOverflow(page)
    assert.ok(scrollWidth <= viewport, `${label} is ${scrollWidth}px wide at ${viewport}px`)
  }
  await page.setViewportSize({ width: 1280, height: 900 })
}

test('an owner advances a clock and deletes it after confirming; its cardholder names it', {
  skip,
  timeout: 180_000,
}, async () => {
  const { clock, holder } = await clockWithHolder('Hold expiry in the browser')
  const { path } = await invite(t, {
    email: `clocks.owner.${Date.now()}@example.test`,
    role: 'owner',
    organization_id: tenant.organizationId,
  })
  const page = await signedInThroughLink(browser, origin, origin + path, PASSWORD, 1280)
  try {
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Sandbox clocks' })
      .click()
    await page.waitForURL(`${origin}/console/sandbox/clocks`)
    await page.getByRole('table', { name: 'Clocks, newest first' }).waitFor()
    await checkPage(page, 'clocks list')
    await page.getByRole('link', { name: 'Hold expiry in the browser' }).click()
    await page.waitForURL(`${origin}/console/sandbox/clocks/${clock.id}`)
    await checkPage(page, 'clock page')

    await page.getByRole('link', { name: 'Clementine Clock' }).click()
    await page.waitForURL(`${origin}/console/cardholders/${holder.id}`)
    await page.getByRole('link', { name: 'Hold expiry in the browser' }).click()
    await page.waitForURL(`${origin}/console/sandbox/clocks/${clock.id}`)

    await page.getByRole('textbox', { name: 'Duration' }).fill('P8D')
    await page.getByRole('button', { name: 'Advance by duration' }).click()
    await page.getByText('The clock is at').waitFor()
    const moved = (await t.api(token, 'GET', `/v1/simulate/clocks/${clock.id}`)).json()
    assert.equal(
      new Date(moved.frozen_time).getTime() - new Date(clock.frozen_time).getTime(),
      8 * 86_400_000,
    )

    await page.getByRole('link', { name: 'Delete this clock…' }).click()
    await page.getByRole('heading', { name: 'Delete this sandbox clock?' }).waitFor()
    await checkPage(page, 'delete confirmation')
    await page.getByRole('button', { name: 'Delete clock and its objects' }).click()
    await page.waitForURL(`${origin}/console/sandbox/clocks`)
    await page.getByText('The clock and its objects are deleted.').waitFor()
    assert.equal((await t.api(token, 'GET', `/v1/cardholders/${holder.id}`)).statusCode, 404)
  } finally {
    await page.context().close()
  }
})

test('a viewer sees the clock without a control', { skip, timeout: 120_000 }, async () => {
  const { clock } = await clockWithHolder('Viewer clock')
  const { path } = await invite(t, {
    email: `clocks.viewer.${Date.now()}@example.test`,
    role: 'viewer',
    organization_id: tenant.organizationId,
  })
  const page = await signedInThroughLink(browser, origin, origin + path, PASSWORD, 390)
  try {
    await page.goto(`${origin}/console/sandbox/clocks/${clock.id}`)
    await page.getByRole('heading', { name: 'Sandbox clock: Viewer clock' }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Advance by duration' }).count(), 0)
    assert.equal(await page.getByRole('link', { name: 'Delete this clock…' }).count(), 0)
    await checkPage(page, 'clock page for a viewer')
  } finally {
    await page.context().close()
  }
})
