import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { after, before, test } from 'node:test'
import { signClientAssertion, tokenRequestBody } from '../../src/lib/client-assertion.js'
import { jwkThumbprint } from '../../src/modules/console/keys.js'
import { listenOnPort, startTestApp, type TestApp, TOKEN_URL } from '../helpers/app.js'
import {
  axeViolations,
  launchChromium,
  screenshot,
  seriousOrCritical,
  setPasswordThroughLink,
  skipWithoutChromium as skip,
} from './browser.js'
import { invite } from '../console/support.js'

/**
 * The organization's API clients page in a real browser (Debian's chromium through playwright-core), with the
 * console's CSP enforced: an invited owner registers a client from a pasted JWK Set and mints a token with it, then
 * generates a key pair in the page, downloads its private key and mints a token with that; axe-core on each page.
 */

const PASSWORD = 'saffron-keystone-harbour-31'

let t: TestApp
let origin: string
let orgId: string
let browser: import('playwright-core').Browser

before(async () => {
  if (skip) return
  t = await startTestApp()
  origin = await listenOnPort(t)
  orgId = (await t.operator('POST', '/operator/v1/organizations', { name: 'Pied Piper' })).id
  browser = await launchChromium({ timeoutMs: 30_000 })
})
after(async () => {
  await browser?.close()
  await t?.close()
})

/** POST /oauth/token over HTTP with an assertion signed by `privateJwk` for `clientId`. */
async function mintToken(
  clientId: string,
  privateJwk: Record<string, unknown>,
  kid?: string,
): Promise<{ status: number; body: any }> {
  const assertion = await signClientAssertion({
    clientId,
    privateJwk,
    audience: TOKEN_URL,
    kid,
    nowSeconds: Math.floor(t.clock.now().getTime() / 1000),
  })
  const res = await fetch(`${origin}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: tokenRequestBody(assertion),
  })
  return { status: res.status, body: await res.json() }
}

async function axeClean(page: import('playwright-core').Page, what: string): Promise<void> {
  assert.deepEqual(seriousOrCritical(await axeViolations(page)), [], what)
}

test('an invited owner registers a client from a pasted JWK Set and from a key pair made in the browser; both mint tokens', {
  skip,
  timeout: 180_000,
}, async () => {
  // The CSP is enforced (no bypass): the key-pair script runs only through the response's nonce.
  const context = await browser.newContext({
    viewport: { width: 1280, height: 900 },
    locale: 'en-GB',
    acceptDownloads: true,
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  const problems: string[] = []
  const posted: string[] = []
  page.on('console', (m) => {
    if (m.type() === 'error' && !/status of 422/.test(m.text())) problems.push(m.text())
  })
  page.on('pageerror', (e) => problems.push(e.message))
  page.on('request', (r) => {
    if (r.method() === 'POST') posted.push(r.postData() ?? '')
  })
  try {
    const { path } = await invite(t, {
      email: 'richard@example.test',
      role: 'owner',
      organization_id: orgId,
    })
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)

    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'API clients' })
      .click()
    await page.getByRole('heading', { name: 'API clients', level: 1 }).waitFor()
    await page.getByText('No sandbox client yet.').waitFor()
    await axeClean(page, 'the empty list')

    // 1. A JWK Set made with node's crypto, pasted.
    const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    const jwks = JSON.stringify(
      { keys: [{ ...publicKey.export({ format: 'jwk' }), kid: 'piper-2026' }] },
      null,
      2,
    )
    await page.getByRole('link', { name: 'Register a client' }).click()
    await page.getByRole('heading', { name: 'Register an API client', level: 1 }).waitFor()
    await page.getByLabel('Label').fill('Piper backend')
    await page.getByLabel('Public keys').fill(jwks)
    await page.getByLabel('cards:write').uncheck()
    await page.getByRole('button', { name: 'Register client' }).click()
    await page.getByRole('heading', { name: 'API client: Piper backend', level: 1 }).waitFor()
    await page.getByRole('status').filter({ hasText: 'is registered' }).waitFor()
    const pastedId = /\/(oc_\w+)$/.exec(page.url())![1]
    assert.ok(await page.getByRole('cell', { name: 'piper-2026' }).isVisible())
    assert.match(await page.locator('#token-h + p + pre').innerText(), /oauth\/token/)
    await axeClean(page, 'a client')
    const pasted = await mintToken(pastedId, {
      ...privateKey.export({ format: 'jwk' }),
      kid: 'piper-2026',
    })
    assert.equal(pasted.status, 200, JSON.stringify(pasted.body))
    assert.match(pasted.body.access_token, /^at_test_/)
    assert.doesNotMatch(pasted.body.scope, /cards:write/)

    // 2. A key pair made in the page: the public key fills the field, the private key is a download.
    await page.goto(`${origin}/console/developers/api-clients/new`)
    await page.getByLabel('Label').fill('Browser-made key')
    await page.getByRole('button', { name: 'Generate a key pair in this browser' }).click()
    await page.getByRole('status').filter({ hasText: 'A key pair is made' }).waitFor()
    const field = JSON.parse(await page.getByLabel('Public keys').inputValue())
    assert.equal(field.keys.length, 1)
    assert.deepEqual(
      Object.keys(field.keys[0]).sort(),
      ['alg', 'crv', 'kid', 'kty', 'use', 'x', 'y'],
      'only public members',
    )
    assert.equal(
      field.keys[0].kid,
      jwkThumbprint(field.keys[0]),
      "the kid is the key's RFC 7638 thumbprint, as the server would give it",
    )
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'Download the private key (private-key.json)' }).click(),
    ])
    assert.equal(download.suggestedFilename(), 'private-key.json')
    const file = JSON.parse(readFileSync((await download.path())!, 'utf8'))
    assert.equal(file.kid, field.keys[0].kid)
    assert.equal(file.private_jwk.x, field.keys[0].x)
    assert.equal(typeof file.private_jwk.d, 'string')
    await axeClean(page, 'the registration form with a generated key pair')
    await page.getByRole('button', { name: 'Register client' }).click()
    await page.getByRole('heading', { name: 'API client: Browser-made key', level: 1 }).waitFor()
    const madeId = /\/(oc_\w+)$/.exec(page.url())![1]
    assert.ok(
      posted.length > 0 && posted.every((body) => !body.includes(file.private_jwk.d)),
      'the private key was never sent',
    )
    const made = await mintToken(madeId, file.private_jwk, file.kid)
    assert.equal(made.status, 200, JSON.stringify(made.body))

    // The revocation asks first, and needs its box ticked.
    await page.getByRole('link', { name: 'Revoke this client…' }).click()
    await page.getByRole('heading', { name: 'Revoke Browser-made key?' }).waitFor()
    await axeClean(page, 'the revocation')
    await page.getByRole('link', { name: 'Cancel' }).click()

    await page
      .getByRole('navigation', { name: 'Console' })
      .getByRole('link', { name: 'API clients' })
      .click()
    await page.getByRole('link', { name: 'Piper backend' }).waitFor()
    assert.ok(await page.getByRole('link', { name: 'Browser-made key' }).isVisible())
    await screenshot(page, 'console-api-clients.png', { fullPage: true })
    await axeClean(page, 'the list')
    assert.deepEqual(problems, [], 'no console errors (a CSP violation would be one)')
  } finally {
    await context.close()
  }
})

test('on a phone without JavaScript the pages fit, the key-pair button stays hidden and pasting works', {
  skip,
  timeout: 90_000,
}, async () => {
  const context = await browser.newContext({
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
    locale: 'en-GB',
    javaScriptEnabled: false,
  })
  context.setDefaultTimeout(15_000)
  const page = await context.newPage()
  try {
    const { path } = await invite(t, {
      email: 'dinesh@example.test',
      role: 'developer',
      organization_id: orgId,
    })
    await setPasswordThroughLink(page, origin + path, PASSWORD)
    await page.waitForURL(`${origin}/console`)
    await page.goto(`${origin}/console/developers/api-clients/new`)
    assert.equal(
      await page.getByRole('button', { name: 'Generate a key pair in this browser' }).isVisible(),
      false,
    )
    const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    await page.getByLabel('Label').fill('No-script client')
    await page
      .getByLabel('Public keys')
      .fill(publicKey.export({ type: 'spki', format: 'pem' }) as string)
    await page.getByRole('button', { name: 'Register client' }).click()
    await page.getByRole('heading', { name: 'API client: No-script client', level: 1 }).waitFor()
    const width = await page.evaluate(() => document.documentElement.scrollWidth)
    assert.ok(width <= 390, `the client page is ${width}px wide at 390px`)
    await page.getByRole('link', { name: 'Revoke this client…' }).click()
    await page.getByRole('button', { name: 'Revoke client' }).click()
    // The box is required: the browser keeps the form; posted anyway, the server refuses it.
    assert.match(page.url(), /\/revoke$/)
    await page.getByLabel(/stops working at once/).check()
    await page.getByRole('button', { name: 'Revoke client' }).click()
    await page.getByRole('status').filter({ hasText: 'is revoked' }).waitFor()
  } finally {
    await context.close()
  }
})
