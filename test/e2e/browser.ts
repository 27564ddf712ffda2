import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { after, before } from 'node:test'
import type { Browser, Frame, Page } from 'playwright-core'
import {
  createTenant,
  listenOnPort,
  startTestApp,
  type TestApp,
  type TestClient,
} from '../helpers/app.js'

/** What the page tests share: Debian's chromium, screenshots on request, the axe-core accessibility check. */

export const CHROMIUM = '/usr/bin/chromium'
export const skipWithoutChromium: false | string = existsSync(CHROMIUM)
  ? false
  : `${CHROMIUM} is absent: install it with "apt-get install -y chromium" to run the browser test`

/** `timeoutMs`: how long the browser may take to start (playwright's default otherwise). */
export async function launchChromium(options: { timeoutMs?: number } = {}): Promise<Browser> {
  const { chromium } = await import('playwright-core')
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    timeout: options.timeoutMs,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  })
}

/** What `withBrowserTenant` hands a test file: the app on a real port, a tenant and its token, Chromium. */
export interface BrowserTenant {
  t: TestApp
  tenant: TestClient
  token: string
  origin: string
  browser: Browser
}

/**
 * A test file's app listening on a port, with a tenant, its token and a Chromium, made before its tests and closed
 * after them (nothing when Chromium is absent); `ready` takes them (`(f) => ({ t, origin, … } = f)`).
 */
export function withBrowserTenant(ready: (fixture: BrowserTenant) => unknown): void {
  let fixture: BrowserTenant | undefined
  before(async () => {
    if (skipWithoutChromium) return
    const t = await startTestApp()
    const tenant = await createTenant(t)
    const token = await tenant.token()
    const origin = await listenOnPort(t)
    const browser = await launchChromium({ timeoutMs: 30_000 })
    fixture = { t, tenant, token, origin, browser }
    await ready(fixture)
  })
  after(async () => {
    await fixture?.browser.close()
    await fixture?.t.close()
  })
}

const SCREENSHOT_DIR = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'docs',
  'screenshots',
)

/** True when this run should write the tracked screenshots (`SCREENSHOTS=1 npm test -- test/e2e`). */
export const screenshotsRequested = process.env.SCREENSHOTS === '1'

/**
 * Writes docs/screenshots/<name> only when SCREENSHOTS=1: a plain test run leaves the tracked images alone.
 * Returns whether it wrote.
 */
export async function screenshot(
  page: Page,
  name: string,
  options: { fullPage?: boolean } = {},
): Promise<boolean> {
  if (!screenshotsRequested) return false
  mkdirSync(SCREENSHOT_DIR, { recursive: true })
  await page.screenshot({ path: join(SCREENSHOT_DIR, name), fullPage: options.fullPage ?? false })
  return true
}

const AXE_SOURCE = readFileSync(
  createRequire(import.meta.url).resolve('axe-core/axe.min.js'),
  'utf8',
)

export interface AxeViolation {
  id: string
  impact: string | null
  help: string
  nodes: number
  targets: string[]
}

/**
 * axe-core's violations on the page as it is now, or within `selector` (every rule axe runs by default: WCAG 2.x
 * A/AA and best practices), in a page or in one of its frames (`Frame`). Run it last on a page: a heavy page stays
 * slow to script after a full run. The script is evaluated through the DevTools protocol, so a page's
 * Content-Security-Policy, which rightly refuses inline scripts, does not stop it.
 */
export async function axeViolations(
  page: Page | Frame,
  selector?: string,
): Promise<AxeViolation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE)
  const result = await page.evaluate(async (within) => {
    const axe = (
      window as unknown as {
        axe: { run(context: Document | string, options: object): Promise<{ violations: any[] }> }
      }
    ).axe
    const { violations } = await axe.run(within ?? document, { resultTypes: ['violations'] })
    return violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.length,
      targets: v.nodes.slice(0, 3).map((n: any) => String(n.target)),
    }))
  }, selector)
  return result as AxeViolation[]
}

/** The violations of impact `serious` or `critical`, one line each, for an assertion message. */
export function seriousOrCritical(violations: AxeViolation[]): string[] {
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id} (${v.help}) ×${v.nodes}: ${v.targets.join(' | ')}`)
}

/** Whether the page is wider than its viewport (something forces a horizontal scroll). */
export async function horizontalOverflow(
  page: Page,
): Promise<{ scrollWidth: number; viewport: number }> {
  return page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  }))
}

/** Opens a one-time invitation link and sets the password on its page (the console then signs the person in). */
export async function setPasswordThroughLink(
  page: Page,
  url: string,
  password: string,
): Promise<void> {
  await page.goto(url)
  await page.getByLabel('New password').fill(password)
  await page.getByLabel('Repeat the password').fill(password)
  await page.getByRole('button', { name: 'Set password and sign in' }).click()
}

/**
 * A page in a new context `width` px wide (en-GB) that has set its password through the invitation link `url` and
 * is signed in, on the console's home.
 */
export async function signedInThroughLink(
  browser: Browser,
  origin: string,
  url: string,
  password: string,
  width: number,
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width, height: 900 }, locale: 'en-GB' })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  await setPasswordThroughLink(page, url, password)
  await page.waitForURL(`${origin}/console`)
  return page
}

/**
 * A phone-sized page (390 × 844, touch) that records every request to another origin than `origin`, console
 * errors and page errors. The console's CSP allows no injected script: axe runs with CSP bypassed, in the page as
 * served. A refused form answers 401 or 422 on purpose; anything else logged as an error (a CSP violation) is a problem.
 */
export async function phonePage(
  browser: Browser,
  origin: string,
  options: { javaScriptEnabled?: boolean } = {},
) {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    locale: 'en-GB',
    bypassCSP: true,
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const problems: string[] = []
  const elsewhere: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of (401|422)/.test(m.text())) problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  page.on('request', (r) => {
    if (new URL(r.url()).origin !== origin) elsewhere.push(r.url())
  })
  return { context, page, problems, elsewhere }
}
