// `npm run bench -- docs`: the API reference at /docs in Chromium (Debian's /usr/bin/chromium through playwright-core),
// the app in this process (in-memory PGlite, the same routes as `svc serve`).
//
// Each round opens the page in a fresh browser context (empty cache) and records:
//   bytes      every response the page loads: bytes on the wire (body as sent, compressed or not, plus headers)
//              and bytes decoded, per resource and in total
//   painted    time from the start of navigation until the "Getting an access token" heading is first painted
//              (Element Timing: the page marks the heading with `elementtiming`; Redoc's page had no such mark)
//   token      until that heading is laid out, as a script on the page sees it (performance.now(), polled every
//              animation frame, so it also waits for the main thread to be free: the parser, the renderer)
//   operation  the same for the token endpoint's heading ("Exchange a signed client assertion for an access token",
//              POST /oauth/token, the reference's first operation)
//   cards      the same for "Issue a card" (POST /v1/cards, in the middle of the document)
//   first paint  first contentful paint
//   load       the load event
// then a second load in the same context (the cache warm: what a returning reader transfers).
//
//   npm run bench -- docs [--runs 5]
import { parseArgs } from 'node:util'
import type { Browser, Page, Request } from 'playwright-core'
import { launchChromium } from '../test/e2e/browser.js'
import { startTestApp } from '../test/helpers/app.js'

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } })
const RUNS = Number(values.runs)

interface Resource {
  url: string
  status: number
  encoding: string
  wire: number
  decoded: number
}

interface Round {
  resources: Resource[]
  token: number
  operation: number
  cards: number
  load: number
  fcp: number
  painted: number
  warmWire: number
}

/** Milliseconds since navigation start at which a heading whose text matches `pattern` has a box. */
function headingShown(page: Page, pattern: string): Promise<number> {
  return page
    .waitForFunction(
      (source) => {
        const re = new RegExp(source)
        for (const h of Array.from(document.querySelectorAll('h1, h2, h3'))) {
          if (re.test(h.textContent ?? '') && h.getBoundingClientRect().height > 0)
            return performance.now()
        }
        return false
      },
      pattern,
      { polling: 'raf', timeout: 120_000 },
    )
    .then((handle) => handle.jsonValue() as Promise<number>)
}

/** Records every response `page` receives until the returned function is called, which waits for the last. */
function record(page: Page, into: Resource[]): () => Promise<void> {
  const pending: Promise<void>[] = []
  const listener = (request: Request) => {
    pending.push(
      (async () => {
        const response = await request.response()
        if (!response || request.url().startsWith('data:')) return
        const sizes = await request.sizes()
        const body = await response.body().catch(() => Buffer.alloc(0))
        into.push({
          url: new URL(request.url()).pathname,
          status: response.status(),
          encoding: response.headers()['content-encoding'] ?? 'identity',
          wire: sizes.responseBodySize + sizes.responseHeadersSize,
          decoded: body.length,
        })
      })().catch(() => {}),
    )
  }
  page.on('requestfinished', listener)
  return async () => {
    await Promise.all(pending)
    page.off('requestfinished', listener)
  }
}

async function round(browser: Browser, origin: string): Promise<Round> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    bypassCSP: true,
  })
  try {
    const page = await context.newPage()
    const resources: Resource[] = []
    const settle = record(page, resources)
    await page.goto(`${origin}/docs`, { waitUntil: 'commit' })
    const [token, operation, cards] = await Promise.all([
      headingShown(page, '^\\s*Getting an access token\\s*$'),
      headingShown(page, '^\\s*Exchange a signed client assertion for an access token\\s*$'),
      headingShown(page, '^\\s*Issue a card\\s*$'),
    ])
    await page.waitForLoadState('load')
    const { load, fcp } = await page.evaluate(() => {
      const [nav] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[]
      const fcp = performance.getEntriesByName('first-contentful-paint')[0]
      return { load: nav.loadEventStart, fcp: fcp?.startTime ?? Number.NaN }
    })
    // When the token section's heading was painted (Element Timing; the page marks it with `elementtiming`).
    const painted = await page.evaluate(
      () =>
        new Promise<number>((resolve) => {
          new PerformanceObserver((list) => {
            const entry = list
              .getEntries()
              .find(
                (e) =>
                  (e as unknown as { identifier: string }).identifier ===
                  'section/Getting-an-access-token',
              )
            if (entry) resolve((entry as unknown as { renderTime: number }).renderTime)
          }).observe({ type: 'element', buffered: true })
          setTimeout(() => resolve(Number.NaN), 2000)
        }),
    )
    await settle()
    const again: Resource[] = []
    const settleAgain = record(page, again)
    await page.reload({ waitUntil: 'load' })
    await settleAgain()
    return {
      resources,
      token,
      operation,
      cards,
      load,
      fcp,
      painted,
      warmWire: again.reduce((s, r) => s + r.wire, 0),
    }
  } finally {
    await context.close()
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`
const ms = (n: number) => `${Math.round(n)} ms`

const t = await startTestApp()
await t.app.listen({ port: 0, host: '127.0.0.1' })
const address = t.app.server.address()
const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
const browser = await launchChromium()
try {
  await round(browser, origin) // warm the server's lazily built assets and the browser itself
  const rounds: Round[] = []
  for (let i = 0; i < RUNS; i++) rounds.push(await round(browser, origin))
  const first = rounds[0]
  process.stdout.write(
    '\nFirst load, per resource:\n\n| resource | status | encoding | on the wire | decoded |\n|---|---:|---|---:|---:|\n',
  )
  for (const r of first.resources)
    process.stdout.write(
      `| ${r.url} | ${r.status} | ${r.encoding} | ${kb(r.wire)} | ${kb(r.decoded)} |\n`,
    )
  const wire = first.resources.reduce((s, r) => s + r.wire, 0)
  const decoded = first.resources.reduce((s, r) => s + r.decoded, 0)
  process.stdout.write(`| **total** | | | **${kb(wire)}** | **${kb(decoded)}** |\n`)
  process.stdout.write(
    `\nMedian of ${RUNS} cold loads (1280 × 900): token section painted ${ms(median(rounds.map((r) => r.painted)))} and laid out ${ms(median(rounds.map((r) => r.token)))}, ` +
      `first operation ${ms(median(rounds.map((r) => r.operation)))}, "Issue a card" ${ms(median(rounds.map((r) => r.cards)))}, ` +
      `first contentful paint ${ms(median(rounds.map((r) => r.fcp)))}, load event ${ms(median(rounds.map((r) => r.load)))}; a reload with the cache warm transfers ${kb(median(rounds.map((r) => r.warmWire)))}.\n`,
  )
  process.stdout.write(
    `All rounds (token painted / token / operation / cards / first paint / load, ms): ${rounds.map((r) => [r.painted, r.token, r.operation, r.cards, r.fcp, r.load].map(Math.round).join('/')).join(', ')}\n`,
  )
} finally {
  await browser.close()
  await t.close()
}
