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
 * /docs (rendered on the server), the Markdown guides (from a folder of the test's own), the landing page
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

/**
 * axe-core's serious and critical violations on the whole reference, every section laid out. On screen the page
 * skips the layout of sections out of view (`content-visibility: auto`), and axe cannot tell the colours of text the
 * browser has not laid out (it reports the colour of whatever is painted at that place). Print media lays out every
 * section with the same styles (the screen-only rule is the skipping), so the scan runs there, then the page returns
 * to the screen.
 */
async function scanEverySection(page: Page): Promise<string[]> {
  await page.emulateMedia({ media: 'print' })
  try {
    return seriousOrCritical(await axeViolations(page))
  } finally {
    await page.emulateMedia({ media: 'screen' })
  }
}

/** The reference: rendered on the server, so it is there once the page has loaded. */
async function openReference(page: Page, hash = ''): Promise<void> {
  const response = await page.goto(`${origin}/docs${hash}`)
  assert.equal(response?.status(), 200)
  await page.getByRole('heading', { level: 2, name: 'Getting an access token' }).waitFor()
}

test('the reference opens on getting an access token, the platform endpoints last', {
  skip: skip || databaseIndependent,
  timeout: 120_000,
}, async () => {
  const { context, page, problems } = await open({ width: 1280, height: 900 })
  try {
    await openReference(page)
    const main = page.getByRole('main')
    assert.deepEqual(
      (await main.getByRole('heading', { level: 2 }).allInnerTexts()).slice(0, 1),
      ['Getting an access token'],
      'the first section of the page',
    )
    const nav = page.getByRole('navigation', { name: 'API reference' })
    assert.equal(await nav.getByRole('link').first().innerText(), 'Getting an access token')
    // The token section is on the first screen.
    assert.ok(await main.getByRole('heading', { name: 'Getting an access token' }).isVisible())
    const box = await main.getByRole('heading', { name: 'Getting an access token' }).boundingBox()
    assert.ok(box && box.y < 900, `the token section starts on the first screen (y ${box?.y})`)
    const tags = await page.locator('section.tag > h2').allInnerTexts()
    assert.equal(tags[0], 'OAuth')
    assert.deepEqual(tags.slice(-3), ['Simulator', 'Operator', 'Platform'])
    const intro = await page.locator('.ref-main').innerText()
    for (const step of [/npx svc token/, /POST \/oauth\/token/, /new Svc\(/])
      assert.match(intro, step)
    assert.deepEqual(problems, [])
  } finally {
    await context.close()
  }
})

test('the API reference finds POST /v1/cards by search and shows its fields, request example, curl and SDK calls and its object, all from this host', {
  skip: skip || databaseIndependent,
  timeout: 180_000,
}, async () => {
  const { context, page, requests, problems } = await open({ width: 1280, height: 900 })
  try {
    await openReference(page)

    // Search: the script adds the box; typing filters the navigation, Enter goes to the first match.
    const search = page.getByRole('search', { name: 'Operations' })
    await search.getByRole('searchbox', { name: 'Search operations' }).fill('issue a card')
    assert.match(await search.getByRole('status').innerText(), /^[1-9] operations? match(es)?$/)
    const nav = page.getByRole('navigation', { name: 'API reference' })
    const shown = nav.locator('li[data-path]:visible a')
    assert.equal(await shown.first().innerText(), 'POST Issue a card', 'the first match')
    assert.equal(
      await nav.getByRole('link', { name: 'Getting an access token' }).isVisible(),
      false,
    )
    assert.equal(await nav.getByRole('link', { name: 'GET Retrieve a card' }).isVisible(), false)
    await search.getByRole('searchbox').press('Enter')
    await page.waitForURL(/#tag\/Cards\/paths\/~1v1~1cards\/post$/)
    const operation = page.locator(OPERATION)
    await operation.getByRole('heading', { level: 3, name: 'Issue a card' }).waitFor()
    assert.match(await operation.locator('.endpoint').innerText(), /^POST\s+\/v1\/cards$/)
    assert.match(await operation.locator('.meta').innerText(), /Scope\s+cards:write/)

    // The request body: form_factor's values, and delivery_address's fields as rows of their own.
    const fields = operation.getByRole('table', { name: 'Request body fields' })
    const formFactor = fields.getByRole('row', { name: /^form_factor required/ })
    assert.match(await formFactor.innerText(), /"virtual", "physical"/)
    for (const field of ['name', 'line1', 'line2', 'city', 'state', 'postal_code', 'country']) {
      assert.equal(
        await fields
          .getByRole('row', { name: new RegExp(`^delivery_address\\.${field}\\b`) })
          .count(),
        1,
        `delivery_address.${field} is listed`,
      )
    }

    // The request example, its curl and SDK calls, the answer's object and the errors with their catalogue links.
    const sample = (name: string) =>
      operation.getByRole('figure', { name, exact: true }).locator('pre')
    assert.match(await sample('Request body example').innerText(), /"form_factor": "virtual"/)
    const curl = await sample('curl').innerText()
    assert.match(curl, /curl -X POST "\$SVC_BASE_URL\/v1\/cards"/)
    assert.match(curl, /Idempotency-Key: \$\(uuidgen\)/)
    assert.match(await sample('SDK').innerText(), /const card = await svc\.cards\.create\(\{/)
    assert.ok(await operation.getByRole('heading', { level: 5, name: '201 Created' }).isVisible())
    await operation.getByRole('link', { name: 'Card', exact: true }).click()
    await page.waitForURL(/#schemas\/Card$/)
    const card = page.locator('[id="schemas/Card"]')
    const example = await card.getByRole('figure', { name: 'Card example' }).innerText()
    assert.match(example, /"id": "card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M"/)
    assert.match(example, /"postal_code": "NW1 6XE"/)
    assert.equal(
      await operation.getByRole('link', { name: 'card_limit_reached' }).getAttribute('href'),
      '/docs/errors#card_limit_reached',
    )

    // Accessibility: axe-core over the whole page, the search results open. Nothing serious or critical.
    await operation.evaluate((e) => e.scrollIntoView({ block: 'start' }))
    await screenshot(page, 'docs-reference.png')
    const { scrollWidth, viewport } = await horizontalOverflow(page)
    assert.ok(
      scrollWidth <= viewport,
      `/docs is ${scrollWidth} px wide in a ${viewport} px viewport`,
    )
    assert.deepEqual(await scanEverySection(page), [], '/docs at 1,280 px')

    assert.deepEqual(offHost(requests), [], 'every request stays on this host')
    assert.ok(
      !requests.some((u) => u.endsWith('/openapi.json')),
      'the page does not load the document',
    )
    assert.deepEqual(problems, [], 'no console errors (a blocked resource would show here)')
  } finally {
    await context.close()
  }
})

test('without JavaScript the reference is all there, only the search box is missing', {
  skip: skip || databaseIndependent,
  timeout: 120_000,
}, async () => {
  const context = await browser.newContext({
    javaScriptEnabled: false,
    viewport: { width: 1280, height: 900 },
  })
  try {
    const page = await context.newPage()
    await openReference(page)
    assert.equal(await page.getByRole('search').count(), 0)
    assert.ok(
      await page.locator(OPERATION).getByRole('figure', { name: 'SDK', exact: true }).isVisible(),
    )
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
    await openReference(page, '#tag/Cards/paths/~1v1~1cards/post')
    await page.locator(OPERATION).getByRole('heading', { name: 'Issue a card' }).waitFor()
    const reference = await horizontalOverflow(page)
    assert.ok(
      reference.scrollWidth <= reference.viewport,
      `/docs is ${reference.scrollWidth} px wide in a ${reference.viewport} px viewport`,
    )
    await screenshot(page, 'docs-reference-390.png')
    assert.deepEqual(await scanEverySection(page), [], '/docs on a phone')
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
