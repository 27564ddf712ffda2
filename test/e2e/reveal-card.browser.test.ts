import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, test } from 'node:test'
import { compactDecrypt } from 'jose'
import type { Browser, Frame, Page, Request, Response } from 'playwright-core'
import { createTenant, listenOnPort, startTestApp, type TestApp } from '../helpers/app.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'
import {
  axeViolations,
  launchChromium,
  screenshot,
  skipWithoutChromium as skip,
} from './browser.js'

/**
 * The documented integrator page (docs/examples/reveal-card.html), served from its own origin (http://localhost:…)
 * with the one backend route it needs, embeds the hosted card details page of the service (http://127.0.0.1:…) in
 * Chromium at a phone's width: the number is visible in the frame, and absent from the parent's DOM and from every
 * request and response the parent made. A frame on another origin shows nothing. `SCREENSHOTS=1` writes
 * docs/screenshots/reveal-card.png.
 */

const EXAMPLE = readFileSync(
  new URL('../../docs/examples/reveal-card.html', import.meta.url),
  'utf8',
)

let t: TestApp
let token: string
let svcOrigin: string
let card: any
let details: { number: string; cvc: string; exp_month: number; exp_year: number }
let browser: Browser
/** The integrator's site: the example page and its backend route, on `integrator`; `stranger` is another origin. */
let site: Server
let integrator: string
let stranger: string
const sessionsMade: string[] = []

/** What the integrator's backend does: create a session for its own origin, and answer the URL only. */
async function createSessionFor(targetOrigin: string): Promise<{ url: string }> {
  const res = await t.api(token, 'POST', `/v1/cards/${card.id}/reveal_sessions`, {
    target_origin: targetOrigin,
  })
  assert.equal(res.statusCode, 201, res.body)
  sessionsMade.push(res.json().id)
  // The test app's BASE_URL is http://svc.test; the browser reaches the service where it listens.
  return { url: svcOrigin + new URL(res.json().url).pathname }
}

before(async () => {
  if (skip) return
  t = await startTestApp()
  svcOrigin = await listenOnPort(t)
  const tenant = await createTenant(t)
  token = await tenant.token()
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  card = await issuedCard(t, token, cardBody(holder.id, account.id))
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const res = await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
    public_key: keys.publicKey.export({ format: 'jwk' }),
  })
  const { plaintext } = await compactDecrypt(res.json().encrypted_details, keys.privateKey)
  details = JSON.parse(new TextDecoder().decode(plaintext))

  site = createServer((req, res) => {
    const origin = `http://${req.headers.host}`
    if (req.method === 'GET' && req.url === '/') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(EXAMPLE)
    } else if (req.method === 'POST' && req.url === '/api/reveal-session') {
      createSessionFor(origin === stranger ? integrator : origin).then(
        (body) =>
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
        (err) => res.writeHead(500).end(String(err)),
      )
    } else {
      res.writeHead(404).end()
    }
  })
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
  const port = (site.address() as AddressInfo).port
  integrator = `http://localhost:${port}`
  // The same server under another host name: another origin, whose page asks for a session made for `integrator`.
  stranger = `http://127.0.0.1:${port}`
  browser = await launchChromium()
})

after(async () => {
  await browser?.close()
  await new Promise((resolve) => (site ? site.close(resolve) : resolve(undefined)))
  await t?.close()
})

const grouped = (n: string) => n.replace(/(\d{4})(?=\d)/g, '$1 ')

/** A phone-sized page (390 px) that keeps every request and response its own (main) frame made, with their bodies. */
async function phone() {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    locale: 'en-GB',
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const parentTraffic: string[] = []
  const pending: Promise<void>[] = []
  const console: string[] = []
  const ownFrame = (frame: Frame | null) => frame === page.mainFrame()
  page.on('console', (m) => console.push(m.text()))
  page.on('request', (r: Request) => {
    if (!ownFrame(r.frame())) return
    parentTraffic.push(
      `${r.method()} ${r.url()}\n${JSON.stringify(r.headers())}\n${r.postData() ?? ''}`,
    )
  })
  page.on('response', (r: Response) => {
    if (!ownFrame(r.frame())) return
    pending.push(
      r
        .text()
        .catch(() => '')
        .then((body) => {
          parentTraffic.push(`${r.status()} ${r.url()}\n${JSON.stringify(r.headers())}\n${body}`)
        }),
    )
  })
  const traffic = async () => {
    await Promise.all(pending)
    return parentTraffic.join('\n\n')
  }
  return { context, page, traffic, console }
}

async function detailsFrame(page: Page): Promise<Frame> {
  const handle = await page.locator('iframe[title="Card details"]').elementHandle()
  const frame = await handle?.contentFrame()
  assert.ok(frame, 'the iframe has a frame')
  await frame.waitForLoadState()
  return frame
}

test('the example page shows the number inside the frame only: never in its DOM or in its own traffic', {
  skip,
  timeout: 120_000,
}, async () => {
  const { context, page, traffic } = await phone()
  try {
    await context.grantPermissions(['clipboard-write'], { origin: svcOrigin })
    // Only to check what the copy button wrote: the frame is allowed clipboard-write alone.
    await context.grantPermissions(['clipboard-read'], { origin: integrator })
    assert.equal((await page.goto(`${integrator}/`))?.status(), 200)
    await page.getByRole('button', { name: 'Show card details' }).click()
    const frame = await detailsFrame(page)
    assert.equal(new URL(frame.url()).origin, svcOrigin)

    const number = frame.getByText(grouped(details.number))
    await number.waitFor()
    assert.equal(await number.isVisible(), true, 'the number is visible in the frame')
    const box = await number.boundingBox()
    assert.ok(box && box.width > 100 && box.x + box.width <= 390, JSON.stringify(box))
    assert.equal(await frame.getByText(details.cvc, { exact: true }).isVisible(), true)
    const expiry = `${String(details.exp_month).padStart(2, '0')}/${String(details.exp_year % 100).padStart(2, '0')}`
    assert.equal(await frame.getByText(expiry, { exact: true }).isVisible(), true)
    // The query parameters of the example styled the frame through its CSS variables.
    const accent = await frame
      .getByRole('button', { name: 'Copy card number' })
      .evaluate((b) => getComputedStyle(b).backgroundColor)
    assert.equal(accent, 'rgb(11, 110, 79)')

    // The copy button writes the digits to the clipboard and says so.
    await frame.getByRole('button', { name: 'Copy card number' }).click()
    await frame.getByRole('status').filter({ hasText: 'Card number copied.' }).waitFor()
    assert.equal(await page.evaluate(() => navigator.clipboard.readText()), details.number)
    await screenshot(page, 'reveal-card.png')

    // The parent cannot reach into the frame, and its DOM has no trace of the number.
    assert.equal(
      await page.evaluate(() => document.querySelector('iframe')?.contentDocument ?? null),
      null,
    )
    const parentDom = await page.content()
    for (const form of [details.number, grouped(details.number)])
      assert.ok(!parentDom.includes(form), 'the number is in the parent DOM')
    const parentText = await page.evaluate(() => document.body.innerText)
    assert.ok(!parentText.includes(details.number.slice(-8)))

    // Neither any request the parent made nor any response it received carries it.
    const seen = await traffic()
    assert.match(
      seen,
      /POST http:\/\/localhost:\d+\/api\/reveal-session/,
      'the traffic was recorded',
    )
    assert.match(seen, /card-reveal\//, "the parent's backend answered the session URL")
    for (const form of [details.number, grouped(details.number)])
      assert.ok(!seen.includes(form), 'the number passed through the parent')

    const parentAxe = await axeViolations(page)
    assert.deepEqual(parentAxe, [], 'the example page is axe-clean at 390 px')
    const frameAxe = await axeViolations(frame)
    assert.deepEqual(frameAxe, [], 'the hosted page is axe-clean at 390 px')

    // The same URL again (a reload of the frame) shows that it was already shown, and nothing else.
    await frame.goto(frame.url())
    const reloaded = await detailsFrame(page)
    await reloaded.getByRole('heading', { name: 'These card details were already shown' }).waitFor()
    assert.ok(!(await reloaded.content()).includes(details.number))
    assert.deepEqual(await axeViolations(reloaded), [], 'the message page is axe-clean')
  } finally {
    await context.close()
  }
})

test('a page of another origin gets nothing: the service refuses it, and the browser refuses to frame it', {
  skip,
  timeout: 120_000,
}, async () => {
  const { context, page, console } = await phone()
  try {
    // The example page served from the other origin: its backend hands it a session made for `integrator`.
    assert.equal((await page.goto(`${stranger}/`))?.status(), 200)
    await page.getByRole('button', { name: 'Show card details' }).click()
    const frame = await detailsFrame(page)
    await page.waitForTimeout(300)
    assert.ok(!(await frame.content().catch(() => '')).includes(details.number))
    assert.ok(
      console.some((line) => /frame-ancestors/.test(line)),
      `the browser refused to frame it: ${console.join(' | ')}`,
    )
    const sent = await t.deps.db
      .selectFrom('card_secret_audit')
      .select('outcome')
      .where('card_id', '=', card.id)
      .where('operation', '=', 'details.view')
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    assert.equal(sent.outcome, 'reveal_frame_refused', 'the Referer named the other origin')

    // Without a Referer the service cannot tell; the browser still refuses to render it elsewhere.
    const { url } = await createSessionFor(integrator)
    await page.evaluate((src) => {
      const frame = document.createElement('iframe')
      frame.title = 'Card details'
      frame.referrerPolicy = 'no-referrer'
      frame.src = src
      document.getElementById('card-details')!.replaceChildren(frame)
    }, url)
    const quiet = await detailsFrame(page)
    await page.waitForTimeout(300)
    assert.ok(!(await quiet.content().catch(() => '')).includes(details.number))
    assert.equal(await quiet.getByText(grouped(details.number)).count(), 0)
  } finally {
    await context.close()
  }
})
