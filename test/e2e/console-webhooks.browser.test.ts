import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { JobRunner } from '../../src/jobs/runner.js'
import { listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { emitEvent, startReceiver, type Receiver } from '../webhooks/helpers.js'
import type { TestClient } from '../helpers/app.js'
import { invite } from '../console/support.js'
import {
  axeViolations,
  launchChromium,
  screenshot,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The console's Webhooks and Events pages in a real browser (Debian's chromium through playwright-core): an owner adds an
 * endpoint for a receiver on this machine, sends a test event, reads the attempt in the delivery log, replays it and the
 * receiver gets it again with the next Svc-Delivery-Attempt; axe-core on every page, at a desktop's width and a phone's.
 */

const PASSWORD = 'saffron-quarry-beacon-93'

let t: TestApp
let origin: string
let receiver: Receiver
let browser: import('playwright-core').Browser

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  receiver = await startReceiver('/svc-hooks')
  browser = await launchChromium({ timeoutMs: 30_000 })
})
after(async () => {
  await browser?.close()
  await receiver?.close()
  await t?.close()
})

type Page = import('playwright-core').Page

async function axeClean(page: Page, what: string): Promise<void> {
  assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], what)
}

async function fitsWidth(page: Page, what: string): Promise<void> {
  const width = await page.evaluate(() => document.documentElement.scrollWidth)
  assert.ok(width <= 390, `${what}: the page is ${width}px wide at a 390px viewport`)
}

test('an owner adds an endpoint for a local receiver, sees the test event delivered in the log, replays it, and reads the event', {
  skip,
  timeout: 180_000,
}, async () => {
  const orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Hooli' })).id
  const { path } = await invite(t, {
    email: 'gavin@example.test',
    role: 'owner',
    organization_id: orgId,
  })
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
    bypassCSP: true,
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const problems: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (401|422)/.test(m.text())) problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  const runner = new JobRunner(t.deps, t.jobs)
  try {
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)

    // The Webhooks page: no endpoint yet, the form to add one.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Webhooks' })
      .click()
    await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
    await axeClean(page, 'webhooks list (empty)')
    await page.getByLabel('URL').fill(receiver.url)
    await page.getByLabel('Description (optional)').fill('Local receiver')
    await page
      .getByRole('group', { name: 'cardholder' })
      .getByLabel('Every cardholder event (cardholder.*)')
      .check()
    await page.getByLabel('card.issued').check()
    await page.getByRole('button', { name: 'Add endpoint' }).click()

    // The secret, once.
    await page.getByRole('heading', { name: 'Signing secret', level: 1 }).waitFor()
    const secret = await page.locator('code.secret').innerText()
    assert.match(secret, /^whsec_/)
    await axeClean(page, 'secret page')
    await page.getByRole('link', { name: 'Go to the endpoint' }).click()
    await page.getByRole('heading', { name: `Endpoint ${receiver.url}`, level: 1 }).waitFor()
    assert.ok(!(await page.content()).includes(secret), 'the secret is not shown again')
    await page.getByText('Healthy').first().waitFor()

    // A test event, delivered by the worker.
    await page.getByRole('button', { name: 'Send test event' }).click()
    await page.getByRole('status').filter({ hasText: 'is queued' }).waitFor()
    await runner.drain()
    const [first] = await receiver.waitFor(1)
    assert.equal(first.headers['svc-delivery-attempt'], '1')
    assert.equal(first.body.type, 'webhook_endpoint.test')
    const eventId = first.body.id as string

    // Events of the types it takes, as the API's operations emit them, arrive too.
    const sandbox = { organizationId: orgId, environment: 'sandbox' } as TestClient
    t.clock.advance(2000)
    await emitEvent(t, sandbox, 'cardholder.created', {
      id: 'ich_01M8BN8ZQ4XK3V7W2P5R9T6Y1A',
      object: 'cardholder',
    })
    t.clock.advance(1500)
    await emitEvent(t, sandbox, 'card.issued', {
      id: 'card_01M8BN9C2H7J4K6M8N0P2Q4R6S',
      object: 'card',
    })
    await emitEvent(t, sandbox, 'account.created', {
      id: 'acc_01M8BN9D5F7G9H1J3K5L7M9N1P',
      object: 'account',
    })
    await runner.drain()
    await receiver.waitFor(3)

    // Its attempt in the delivery log: status 200 and a duration.
    await page.reload()
    const log = page.getByRole('region', { name: 'Deliveries' })
    await log.getByRole('link', { name: 'webhook_endpoint.test' }).waitFor()
    const row = log.getByRole('row').filter({ hasText: eventId })
    assert.match(await row.innerText(), /Delivered[\s\S]*Attempt 1: .*HTTP 200, \d+ ms/)
    await axeClean(page, 'endpoint page')
    assert.equal(
      await log.getByRole('row').count(),
      4,
      'the header and three deliveries (not the account event)',
    )
    await screenshot(page, 'console-webhooks.png')

    // Replay it from the log: the receiver gets it again, with the next attempt number.
    await row.getByRole('button', { name: `Replay webhook_endpoint.test ${eventId}` }).click()
    await page.getByRole('status').filter({ hasText: 'queued again for 1 endpoint' }).waitFor()
    await runner.drain()
    const all = await receiver.waitFor(4)
    assert.equal(all[3].body.id, eventId)
    assert.equal(all[3].headers['svc-delivery-attempt'], '2')
    await page.reload()
    assert.match(
      await log.getByRole('row').filter({ hasText: eventId }).innerText(),
      /Attempt 2: .*HTTP 200, \d+ ms/,
    )

    // The endpoint in the list, with its health.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Webhooks' })
      .click()
    const endpoints = page.getByRole('region', { name: 'Endpoints' })
    assert.match(
      await endpoints.getByRole('row').filter({ hasText: receiver.url }).innerText(),
      /Enabled\s+Healthy\s+2 event types/,
    )
    await axeClean(page, 'webhooks list')

    // The events: the list with its filter, then the event's JSON and deliveries.
    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'Events' })
      .click()
    await page.getByRole('heading', { name: 'Events', level: 1 }).waitFor()
    assert.equal(
      await page.getByRole('region', { name: 'Events' }).getByRole('row').count(),
      5,
      'the header and four events',
    )
    await axeClean(page, 'events list')
    await screenshot(page, 'console-events.png')
    await page.getByLabel('Type').selectOption('webhook_endpoint.*')
    await page.getByRole('button', { name: 'Filter' }).click()
    await page.waitForURL(/type=webhook_endpoint/)
    assert.equal(
      await page
        .getByRole('region', { name: 'Events of type webhook_endpoint.*' })
        .getByRole('row')
        .count(),
      2,
      'the header and the test event',
    )
    await axeClean(page, 'events list, filtered')
    await page.getByRole('link', { name: 'webhook_endpoint.test' }).click()
    await page.getByRole('heading', { name: 'Event webhook_endpoint.test', level: 1 }).waitFor()
    assert.equal(JSON.parse(await page.locator('pre.json').innerText()).id, eventId)
    assert.match(
      await page.getByRole('region', { name: 'Deliveries by endpoint' }).innerText(),
      /Attempt 2: .*HTTP 200/,
    )
    await axeClean(page, 'event page')
    assert.deepEqual(problems, [], 'no console errors')

    // The same pages on a phone: no serious axe violation, nothing wider than the screen.
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
      const endpointId = /whe_\w+/.exec(String(first.body.data.object.id))![0]
      for (const p of [
        '/console/developers/webhooks',
        `/console/developers/webhooks/${endpointId}`,
        '/console/developers/events',
        `/console/developers/events/${eventId}`,
      ]) {
        const res = await small.goto(origin + p)
        assert.equal(res?.status(), 200, p)
        await axeClean(small, `${p} on a phone`)
        await fitsWidth(small, p)
      }
    } finally {
      await phone.close()
    }
  } finally {
    await context.close()
  }
})
