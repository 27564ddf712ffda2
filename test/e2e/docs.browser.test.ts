import assert from 'node:assert/strict'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { createDocsModule } from '../../src/modules/docs/module.js'
import { MODULES } from '../../src/modules/index.js'
import { startTestApp, type TestApp } from '../helpers/app.js'
import {
  axeViolations,
  horizontalOverflow,
  launchChromium,
  screenshot,
  seriousOrCritical,
  skipWithoutChromium as skip,
} from './browser.js'
import { databaseIndependent } from '../helpers/suites.js'

/**
 * The documentation pages in a real browser (Debian's chromium through playwright-core): the API reference at
 * /docs (Redoc, served from this host), the Markdown guides (from a folder of the test's own), the landing page
 * and the error catalogue. Every request the pages make is recorded and must stay on this host.
 */

const FIRST_CARD = `# Your first card in the sandbox

This guide issues a virtual card on the demo organization: a cardholder, an account, then the card. Every call is
shown with its answer; the [event catalogue](event-catalogue.md#card-events) lists what each step emits.

## Issue the card

\`POST /v1/cards\` takes the cardholder, the account, the form factor and a delivery address
(see the [API reference](/docs)):

\`\`\`sh
curl -s "$SVC/v1/cards" -H "Authorization: Bearer $TOKEN" -H "Idempotency-Key: $(uuidgen)" -H "Content-Type: application/json" -d '{"cardholder_id": "chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N", "account_id": "acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K", "form_factor": "virtual", "card_type": "debit"}'
\`\`\`

| field | meaning |
|---|---|
| \`form_factor\` | \`virtual\` or \`physical\` |
| \`delivery_address\` | where a physical card is sent |

A closed card answers [\`card_closed\`](/docs/errors#card_closed).
`

const EVENT_CATALOGUE = `# Event catalogue

Every event the service emits. Back to [your first card](./first-card.md).

## Card events

| type | when |
|---|---|
| \`card.created\` | \`POST /v1/cards\` accepted the card |
| \`card.issued\` | the processor issued it |
`

let t: TestApp
let origin: string
let host: string
let guidesDir: string
let browser: Browser

before(async () => {
  if (skip || databaseIndependent) return
  guidesDir = mkdtempSync(join(tmpdir(), 'svc-guides-'))
  writeFileSync(join(guidesDir, 'first-card.md'), FIRST_CARD)
  writeFileSync(join(guidesDir, 'event-catalogue.md'), EVENT_CATALOGUE)
  t = await startTestApp({
    modules: MODULES.map((m) => (m.name === 'docs' ? createDocsModule({ guidesDir }) : m)),
  })
  await t.app.listen({ port: 0, host: '127.0.0.1' })
  const address = t.app.server.address()
  host = `127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
  origin = `http://${host}`
  browser = await launchChromium()
})
after(async () => {
  await browser?.close()
  await t?.close()
  if (guidesDir) rmSync(guidesDir, { recursive: true, force: true })
})

interface Visit {
  context: BrowserContext
  page: Page
  requests: string[]
  problems: string[]
}

/** A fresh browser context that records every request and every console error or page error of its pages. */
async function open(viewport: { width: number; height: number }, phone = false): Promise<Visit> {
  const context = await browser.newContext({
    viewport,
    isMobile: phone,
    hasTouch: phone,
    deviceScaleFactor: phone ? 2 : 1,
    locale: 'en-GB',
  })
  const page = await context.newPage()
  page.setDefaultTimeout(30_000)
  const requests: string[] = []
  const problems: string[] = []
  context.on('request', (r) => requests.push(r.url()))
  context.on('console', (m) => {
    if (m.type() === 'error') problems.push(m.text())
  })
  context.on('weberror', (e) => problems.push(e.error().message))
  return { context, page, requests, problems }
}

/** Requests that would leave this host: any URL with a host other than the server's (blob: and data: have none). */
function offHost(requests: string[]): string[] {
  return requests.filter((url) => {
    const u = new URL(url)
    if (u.protocol === 'data:') return false
    if (u.protocol === 'blob:') return new URL(u.pathname).host !== host
    return u.host !== host
  })
}

const OPERATION = '[id="tag/Cards/paths/~1v1~1cards/post"]'

/** The reference, rendered: wait for Redoc to have drawn the operations (bounded). */
async function openReference(page: Page): Promise<void> {
  const response = await page.goto(`${origin}/docs`)
  assert.equal(response?.status(), 200)
  await page.getByRole('heading', { name: /Issue a card$/ }).waitFor({ timeout: 60_000 })
}

test('the reference opens on getting an access token, the platform endpoints last', {
  skip: skip || databaseIndependent,
  timeout: 180_000,
}, async () => {
  const { context, page, problems } = await open({ width: 1280, height: 900 })
  try {
    await openReference(page)
    const ids = await page
      .locator('.menu-content li[data-item-id]')
      .evaluateAll((items) => items.map((li) => li.getAttribute('data-item-id') ?? ''))
    assert.equal(ids[0], 'section/Getting-an-access-token', 'the first entry of the navigation')
    const tags = ids.filter((id) => /^tag\/[^/]+$/.test(id))
    assert.equal(tags[0], 'tag/OAuth')
    assert.deepEqual(tags.slice(-3), ['tag/Simulator', 'tag/Operator', 'tag/Platform'])
    const intro = (
      await page.locator('[id^="section/Getting-an-access-token"]').allInnerTexts()
    ).join('\n')
    for (const step of [/npx svc token/, /POST \/oauth\/token/, /new Svc\(/])
      assert.match(intro, step)
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('the API reference finds POST /v1/cards by search and shows its enum values, nested fields and 201 example, all from this host', {
  skip: skip || databaseIndependent,
  timeout: 420_000,
}, async () => {
  const { context, page, requests, problems } = await open({ width: 1280, height: 900 })
  try {
    await openReference(page)

    // Search: the operation is one of the results, and choosing it brings it into view.
    await page.getByRole('search').getByRole('textbox', { name: 'Search' }).fill('Issue a card')
    await page
      .getByRole('search')
      .getByRole('menuitem', { name: 'Issue a card', exact: true })
      .click()
    const operation = page.locator(OPERATION)
    await operation.getByRole('heading', { name: /Issue a card$/ }).waitFor()
    await page.waitForURL(/#tag\/Cards\/paths\/~1v1~1cards\/post$/)
    assert.equal(await operation.getByRole('button', { name: 'post /v1/cards' }).isVisible(), true)

    // The request body: form_factor's values, and delivery_address opened to its fields.
    const formFactor = operation.getByRole('row', { name: /^form_factor required/ }).first()
    assert.match(await formFactor.innerText(), /"virtual"[\s\S]*"physical"/)
    await operation.getByRole('button', { name: 'expand delivery_address' }).first().click()
    for (const field of ['name', 'line1', 'line2', 'city', 'state', 'postal_code', 'country']) {
      assert.ok(
        await operation
          .getByRole('row', { name: new RegExp(`^${field}\\b`) })
          .first()
          .isVisible(),
        `delivery_address.${field} is listed`,
      )
    }

    // A request sample, its curl and SDK calls, and the 201 response with the document's own example.
    const requestSample = operation.getByRole('tabpanel', { name: 'Payload' })
    assert.match(await requestSample.innerText(), /"form_factor": "virtual"/)
    await operation.getByRole('tab', { name: 'curl', exact: true }).click()
    const curl = await operation.getByRole('tabpanel', { name: 'curl' }).innerText()
    assert.match(curl, /curl -X POST "\$SVC_BASE_URL\/v1\/cards"/)
    assert.match(curl, /Idempotency-Key: \$\(uuidgen\)/)
    await operation.getByRole('tab', { name: 'SDK', exact: true }).click()
    assert.match(
      await operation.getByRole('tabpanel', { name: 'SDK' }).innerText(),
      /const card = await svc\.cards\.create\(\{/,
    )
    await operation.getByRole('tab', { name: '201' }).click()
    const created = operation.getByRole('tabpanel', { name: '201' })
    const example = await created.innerText()
    assert.match(example, /"id": "card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M"/)
    assert.match(example, /"delivery_address":/)
    assert.match(example, /"postal_code": "NW1 6XE"/)
    assert.equal(await operation.getByRole('button', { name: /^201 Created/ }).isVisible(), true)

    // Accessibility (axe-core 4.14 on Redoc 2.5.4), one scan of the whole page as the reader left it: the search
    // results open and the operation in view. Redoc labels each menu entry (aria-label) with the operation's summary
    // alone while it shows the method badge too ("post Issue a card"), and labels an open tag group with the tag's name
    // while its visible text holds the whole group: serious label-content-name-mismatch (19 elements with these search
    // results open). That is Redoc's markup and no option changes it; every other serious or critical violation fails
    // the test. Also left, moderate: heading-order on 208 elements (Redoc's h5 labels "Request Body schema", "Response
    // Schema" skip heading levels). One scan only: on this page it is the slowest step (some 30 s on a quiet 2-core
    // machine), and a second load and scan made the test outlast its bound when CI ran on a busy machine.
    const REDOC_KNOWN = 'serious label-content-name-mismatch'
    await operation.evaluate((e) => e.scrollIntoView({ block: 'start' }))
    await screenshot(page, 'docs-reference.png')
    const violations = seriousOrCritical(await axeViolations(page))
    assert.deepEqual(
      violations.filter((v) => !v.startsWith(REDOC_KNOWN)),
      [],
      "/docs: no serious or critical violation but Redoc's menu naming",
    )
    assert.ok(!violations.some((v) => v.startsWith('critical')), 'nothing critical')

    assert.deepEqual(offHost(requests), [], 'every request stays on this host')
    assert.ok(
      requests.some((u) => u.startsWith(`${origin}/docs/assets/redoc.standalone.js`)),
      'the renderer comes from this host',
    )
    assert.ok(requests.includes(`${origin}/openapi.json`), 'the document comes from this host')
    assert.deepEqual(problems, [], 'no console errors (a blocked resource would show here)')
  } finally {
    await context.close()
  }
})

test('on a 390 px phone the reference, a guide, the error catalogue and the landing page fit the screen, without serious accessibility violations', {
  skip: skip || databaseIndependent,
  timeout: 180_000,
}, async () => {
  const { context, page, requests, problems } = await open({ width: 390, height: 844 }, true)
  try {
    await openReference(page)
    await page.locator(OPERATION).scrollIntoViewIfNeeded()
    const reference = await horizontalOverflow(page)
    assert.ok(
      reference.scrollWidth <= reference.viewport,
      `/docs is ${reference.scrollWidth} px wide in a ${reference.viewport} px viewport`,
    )
    for (const path of ['/docs/guides/first-card', '/docs/errors', '/', '/docs/guides']) {
      assert.equal((await page.goto(origin + path))?.status(), 200, path)
      const { scrollWidth, viewport } = await horizontalOverflow(page)
      assert.ok(
        scrollWidth <= viewport,
        `${path} is ${scrollWidth} px wide in a ${viewport} px viewport`,
      )
      // The phone layout (the error tables stack their rows) passes axe too.
      assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], `${path} on a phone`)
    }
    // The long curl line scrolls inside its code block, which a keyboard can reach.
    await page.goto(`${origin}/docs/guides/first-card`)
    const code = page.locator('pre').first()
    assert.equal(await code.getAttribute('tabindex'), '0')
    assert.ok(
      await code.evaluate((e) => e.scrollWidth > e.clientWidth),
      'the code block scrolls on its own',
    )
    assert.deepEqual(offHost(requests), [])
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('the landing page leads to the guides, a guide links to another and to the reference; no serious accessibility violations', {
  skip: skip || databaseIndependent,
  timeout: 120_000,
}, async () => {
  const { context, page, requests, problems } = await open({ width: 1024, height: 800 })
  try {
    assert.equal((await page.goto(`${origin}/`))?.status(), 200)
    await page.getByRole('heading', { level: 1, name: 'svc' }).waitFor()
    for (const [name, href] of [
      ['API reference', '/docs'],
      ['Guides', '/docs/guides'],
      ['Event catalogue', '/docs/guides/event-catalogue'],
      ['Error catalogue', '/docs/errors'],
      ['openapi.json', '/openapi.json'],
      ['Console', '/console'],
    ]) {
      assert.equal(
        await page.getByRole('main').getByRole('link', { name, exact: true }).getAttribute('href'),
        href,
        name,
      )
    }
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'landing page')

    // Landing → the guides index (titles from each file's first heading) → a guide → the guide it links to.
    await page.getByRole('main').getByRole('link', { name: 'Guides', exact: true }).click()
    await page.waitForURL(`${origin}/docs/guides`)
    await page.getByRole('link', { name: 'Your first card in the sandbox' }).click()
    await page.waitForURL(`${origin}/docs/guides/first-card`)
    await page.getByRole('heading', { level: 1, name: 'Your first card in the sandbox' }).waitFor()
    assert.equal(
      await page
        .getByRole('link', { name: 'API reference', exact: true })
        .last()
        .getAttribute('href'),
      '/docs',
    )
    assert.equal(
      await page.getByRole('link', { name: 'card_closed' }).getAttribute('href'),
      '/docs/errors#card_closed',
    )
    await page.getByRole('heading', { name: 'Issue the card' }).scrollIntoViewIfNeeded()
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], 'guide page')

    await page.getByRole('link', { name: 'event catalogue' }).click()
    await page.waitForURL(`${origin}/docs/guides/event-catalogue#card-events`)
    await page.getByRole('heading', { name: 'Card events' }).waitFor()
    assert.equal(await page.locator(':target').getAttribute('id'), 'card-events')
    await page.getByRole('link', { name: 'your first card' }).click()
    await page.waitForURL(`${origin}/docs/guides/first-card`)

    // The error catalogue, reached from the page header.
    await page
      .getByRole('navigation', { name: 'Documentation' })
      .getByRole('link', { name: 'Errors' })
      .click()
    await page.waitForURL(`${origin}/docs/errors`)
    await page.getByRole('heading', { name: 'Token endpoint errors' }).waitFor()
    assert.equal(await page.getByRole('row', { name: /^invalid_client 401/ }).count(), 1)
    assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], '/docs/errors')

    assert.deepEqual(offHost(requests), [])
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('the shipped first-card guide renders without serious accessibility violations or requests to another host', {
  skip: skip || databaseIndependent,
  timeout: 120_000,
}, async () => {
  // The repository's own first-card guide beside the test's, under another name, for this test only.
  const shipped = join(guidesDir, 'shipped-first-card.md')
  copyFileSync(fileURLToPath(new URL('../../docs/guides/first-card.md', import.meta.url)), shipped)
  const { context, page, requests, problems } = await open({ width: 1280, height: 900 })
  try {
    await page.goto(`${origin}/docs/guides/shipped-first-card`)
    await page.getByRole('heading', { level: 1, name: 'Your first card in the sandbox' }).waitFor()
    await screenshot(page, 'docs-guide.png')
    assert.deepEqual(
      seriousOrCritical(await axeViolations(page)),
      [],
      'the shipped first-card guide',
    )
    assert.deepEqual(offHost(requests), [])
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
    rmSync(shipped, { force: true })
  }
})
