import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { test } from 'node:test'
import { compactDecrypt } from 'jose'
import { sha256Hex } from '../../src/lib/crypto.js'
import { revealOrigin } from '../../src/modules/cards/reveal-sessions.js'
import { frameRefusal } from '../../src/modules/cards/reveal-frame.js'
import { eventsFor, expectError } from '../helpers/api.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from './support.js'

/**
 * Hosted card details (docs/cards.md, "Hosted card details"): the session API, the single-use page, its headers,
 * the refusals that show nothing, the event and the audit trail.
 */

const logLines: string[] = []
let t: TestApp
let tenant: TestClient
let token: string
const callerKeys = generateKeyPairSync('rsa', { modulusLength: 2048 })

withTenant((fixture) => ({ t, tenant, token } = fixture), {
  app: {
    env: { LOG_LEVEL: 'trace' },
    logDestination: {
      write: (line: string) => {
        logLines.push(line)
      },
    },
  },
})

const ORIGIN = 'https://app.example.com'
/** What Chromium sends when an iframe on ORIGIN loads the page. */
const IFRAME = {
  'sec-fetch-dest': 'iframe',
  'sec-fetch-mode': 'navigate',
  'sec-fetch-site': 'cross-site',
  referer: `${ORIGIN}/cards/42`,
}

async function activeCard(programId = tenant.programs.full.id): Promise<any> {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, programId, holder.id)
  return issuedCard(t, token, cardBody(holder.id, account.id))
}

const createSession = (cardId: string, body: unknown, headers?: Record<string, string>) =>
  t.api(token, 'POST', `/v1/cards/${cardId}/reveal_sessions`, body, headers)

async function session(cardId: string, body: Record<string, unknown> = {}): Promise<any> {
  const res = await createSession(cardId, { target_origin: ORIGIN, ...body })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** Opens the page as the browser would (by default: the iframe on ORIGIN). */
const view = (url: string, headers: Record<string, string> = IFRAME, query = '') =>
  t.app.inject({ method: 'GET', url: new URL(url).pathname + query, headers })

/** The number, CVC and expiry through the existing JWE path, to compare with what the page shows. */
async function detailsOf(cardId: string): Promise<any> {
  const res = await t.api(token, 'POST', `/v1/cards/${cardId}/details`, {
    public_key: callerKeys.publicKey.export({ format: 'jwk' }),
  })
  assert.equal(res.statusCode, 200, res.body)
  const { plaintext } = await compactDecrypt(res.json().encrypted_details, callerKeys.privateKey)
  return JSON.parse(new TextDecoder().decode(plaintext))
}

const grouped = (n: string) => n.replace(/(\d{4})(?=\d)/g, '$1 ')

function auditRows(cardId: string) {
  return t.deps.db
    .selectFrom('card_secret_audit')
    .selectAll()
    .where('card_id', '=', cardId)
    .orderBy('id')
    .execute()
}

test('a session is a crs_ id, a single-use URL and its expiry; only the token digest is stored', async () => {
  const card = await activeCard()
  const res = await createSession(card.id, { target_origin: ORIGIN })
  assert.equal(res.statusCode, 201, res.body)
  const body = res.json()
  assert.equal(body.object, 'card_reveal_session')
  assert.match(body.id, /^crs_[0-9A-Z]{26}$/)
  assert.equal(body.card_id, card.id)
  assert.equal(body.target_origin, ORIGIN)
  assert.deepEqual(body.fields, ['number', 'cvc', 'expiry'])
  assert.equal(new Date(body.expires_at).getTime() - new Date(body.created_at).getTime(), 300_000)
  const url = new URL(body.url)
  assert.equal(url.origin, 'http://svc.test')
  const pageToken = /^\/card-reveal\/([A-Za-z0-9_-]{43})$/.exec(url.pathname)?.[1]
  assert.ok(pageToken, body.url)

  const row = await t.deps.db
    .selectFrom('card_reveal_sessions')
    .selectAll()
    .where('id', '=', body.id)
    .executeTakeFirstOrThrow()
  assert.equal(row.token_hash, sha256Hex(pageToken))
  assert.equal(row.client_id, tenant.clientId)
  assert.equal(row.used_at, null)
  assert.ok(!JSON.stringify(row).includes(pageToken), 'the token itself is never stored')

  // Fields come back in display order; expires_in sets the lifetime.
  const some = await session(card.id, { fields: ['expiry', 'number'], expires_in: 60 })
  assert.deepEqual(some.fields, ['number', 'expiry'])
  assert.equal(new Date(some.expires_at).getTime() - new Date(some.created_at).getTime(), 60_000)

  // Nothing about a session shows on the card, in lists or in events; creating one emits nothing.
  const card2 = (await t.api(token, 'GET', `/v1/cards/${card.id}`)).body
  const list = (await t.api(token, 'GET', `/v1/cards?cardholder_id=${card.cardholder_id}`)).body
  for (const text of [card2, list]) {
    assert.ok(!text.includes(pageToken) && !text.includes(body.id) && !text.includes('card-reveal'))
  }
  const events = await t.deps.db.selectFrom('events').select('data').execute()
  assert.ok(!JSON.stringify(events).includes(pageToken))
  assert.deepEqual(await eventsFor(t, card.id, 'card.details_viewed'), [])
})

test('creation is idempotent: the same Idempotency-Key answers the same session, a new key a new one', async () => {
  const card = await activeCard()
  const first = await createSession(
    card.id,
    { target_origin: ORIGIN },
    { 'idempotency-key': 'rv-1' },
  )
  const again = await createSession(
    card.id,
    { target_origin: ORIGIN },
    { 'idempotency-key': 'rv-1' },
  )
  assert.equal(first.statusCode, 201, first.body)
  assert.equal(again.statusCode, 201, again.body)
  assert.equal(again.headers['idempotent-replay'], 'true')
  assert.deepEqual(again.json(), first.json())
  const other = await createSession(
    card.id,
    { target_origin: ORIGIN },
    { 'idempotency-key': 'rv-2' },
  )
  assert.notEqual(other.json().id, first.json().id)
  const rows = await t.deps.db
    .selectFrom('card_reveal_sessions')
    .select('id')
    .where('card_id', '=', card.id)
    .execute()
  assert.equal(rows.length, 2)
})

test('bad input answers 400 invalid_parameter naming the field', async () => {
  const card = await activeCard()
  for (const target_origin of [
    'app.example.com',
    'https://app.example.com/cards',
    'https://app.example.com?x=1',
    'https://app.example.com#frag',
    'https://user:pw@app.example.com',
    'https://*.example.com',
    'ftp://app.example.com',
    'http://app.example.com',
    'http://localhost.example.com',
    'javascript:alert(1)',
    'null',
    '*',
    'https://app.example.com;script-src',
  ]) {
    expectError(
      await createSession(card.id, { target_origin }),
      400,
      'invalid_parameter',
      'target_origin',
    )
  }
  expectError(await createSession(card.id, {}), 400, 'missing_parameter', 'target_origin')
  for (const [fields, param] of [
    [['pan'], 'fields[0]'],
    [['number', 'pin'], 'fields[1]'],
    [[], 'fields'],
    [['number', 'number'], 'fields'],
    ['number', 'fields'],
  ] as const) {
    expectError(
      await createSession(card.id, { target_origin: ORIGIN, fields }),
      400,
      'invalid_parameter',
      param,
    )
  }
  for (const expires_in of [601, 0, -5, 1.5, '60']) {
    expectError(
      await createSession(card.id, { target_origin: ORIGIN, expires_in }),
      400,
      'invalid_parameter',
      'expires_in',
    )
  }
  expectError(
    await createSession(card.id, { target_origin: ORIGIN, style: {} }),
    400,
    'unknown_parameter',
    'style',
  )
  // An origin is normalized as the browser names it; http is for localhost in the sandbox only.
  assert.equal(revealOrigin('https://App.Example.com:443/', 'production'), ORIGIN)
  assert.equal(revealOrigin('https://app.example.com:8443', 'production'), `${ORIGIN}:8443`)
  assert.equal(revealOrigin('http://localhost:5173', 'sandbox'), 'http://localhost:5173')
  assert.equal(revealOrigin('http://127.0.0.1:8080', 'sandbox'), 'http://127.0.0.1:8080')
  assert.throws(() => revealOrigin('http://localhost:5173', 'production'), /must be https/)
  const local = (await session(card.id, { target_origin: 'http://localhost:5173' })).target_origin
  assert.equal(local, 'http://localhost:5173')
})

test('cards:secrets is required; only an active or inactive card gets a session', async () => {
  const card = await activeCard()
  const writer = await tenant.token('cards:read cards:write')
  expectError(
    await t.api(writer, 'POST', `/v1/cards/${card.id}/reveal_sessions`, { target_origin: ORIGIN }),
    403,
    'insufficient_scope',
  )
  expectError(
    await createSession('card_00000000000000000000000000', { target_origin: ORIGIN }),
    404,
    'card_not_found',
  )

  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  const pending = (await t.api(token, 'POST', '/v1/cards', cardBody(holder.id, account.id))).json()
  expectError(
    await createSession(pending.id, { target_origin: ORIGIN }),
    422,
    'card_not_provisioned',
  )
  const physical = await issuedCard(
    t,
    token,
    cardBody(holder.id, account.id, { form_factor: 'physical', card_type: 'debit' }),
  )
  assert.equal(physical.status, 'inactive')
  await session(physical.id)

  await t.api(token, 'POST', `/v1/cards/${card.id}/freeze`)
  expectError(await createSession(card.id, { target_origin: ORIGIN }), 422, 'card_invalid_state')
  await t.api(token, 'POST', `/v1/cards/${card.id}/close`)
  expectError(await createSession(card.id, { target_origin: ORIGIN }), 422, 'card_closed')
})

test('the page shows the fields asked for, once: a second view, even concurrent, shows nothing', async () => {
  const card = await activeCard()
  const details = await detailsOf(card.id)
  const s = await session(card.id)
  const page = await view(s.url)
  assert.equal(page.statusCode, 200, page.body)
  assert.ok(page.body.includes(grouped(details.number)), 'the number, grouped by four')
  assert.ok(
    page.body.includes(`data-copy="${details.number}"`),
    'the copy button copies the digits',
  )
  assert.ok(page.body.includes(`>${details.cvc}<`))
  const expiry = `${String(details.exp_month).padStart(2, '0')}/${String(details.exp_year % 100).padStart(2, '0')}`
  assert.ok(page.body.includes(expiry))

  const second = await view(s.url)
  assert.equal(second.statusCode, 410)
  assert.match(second.body, /already shown/)
  assert.ok(!second.body.includes(details.number) && !second.body.includes(grouped(details.number)))

  // Only the number: no CVC, no expiry on the page.
  const only = await view((await session(card.id, { fields: ['number'] })).url)
  assert.equal(only.statusCode, 200)
  assert.ok(only.body.includes(grouped(details.number)))
  assert.ok(!only.body.includes(`>${details.cvc}<`) && !only.body.includes('value-cvc'))
  assert.ok(!only.body.includes('Security code') && !only.body.includes(expiry))

  // Ten views at once: exactly one is shown the details.
  const racing = await session(card.id)
  const answers = await Promise.all(Array.from({ length: 10 }, () => view(racing.url)))
  assert.deepEqual(
    answers.map((a) => a.statusCode).sort(),
    [200, 410, 410, 410, 410, 410, 410, 410, 410, 410],
  )
  assert.equal(answers.filter((a) => a.body.includes(grouped(details.number))).length, 1)
})

test('an expired session shows its page, never the number; an unknown token says it does not work', async () => {
  const card = await activeCard()
  const details = await detailsOf(card.id)
  const s = await session(card.id, { expires_in: 30 })
  t.clock.advance(30_000)
  const page = await view(s.url)
  assert.equal(page.statusCode, 410)
  assert.match(page.body, /expired/)
  assert.ok(!page.body.includes(details.number))
  assert.match(
    page.headers['content-security-policy'] as string,
    /frame-ancestors https:\/\/app\.example\.com$/,
  )

  for (const path of ['/card-reveal/nope', `/card-reveal/${'A'.repeat(43)}`]) {
    const unknown = await t.app.inject({ method: 'GET', url: path, headers: IFRAME })
    assert.equal(unknown.statusCode, 404)
    assert.match(unknown.body, /does not work/)
    assert.match(unknown.headers['content-security-policy'] as string, /frame-ancestors 'none'/)
    assert.equal(unknown.headers['cache-control'], 'no-store')
  }
})

test('a request that is not the iframe on the target origin shows nothing and uses the session up', async () => {
  const card = await activeCard()
  const details = await detailsOf(card.id)
  const refusals: Record<string, string>[] = [
    { ...IFRAME, 'sec-fetch-dest': 'document' },
    { ...IFRAME, 'sec-fetch-dest': 'empty', 'sec-fetch-mode': 'cors' },
    { ...IFRAME, 'sec-fetch-site': 'none' },
    { ...IFRAME, referer: 'https://evil.example.net/' },
    { ...IFRAME, referer: 'https://app.example.com.evil.example.net/' },
    { 'sec-fetch-dest': 'iframe', origin: 'https://evil.example.net' },
  ]
  for (const headers of refusals) {
    const s = await session(card.id)
    const page = await view(s.url, headers)
    assert.equal(page.statusCode, 403, JSON.stringify(headers))
    assert.match(page.body, /cannot be shown here/)
    assert.ok(!page.body.includes(details.number))
    const after = await view(s.url)
    assert.equal(after.statusCode, 410, 'the refused request used the session')
    assert.ok(!after.body.includes(details.number))
  }
  // Without Referer (referrerpolicy="no-referrer") the headers prove nothing: frame-ancestors is what holds.
  const quiet = await view((await session(card.id)).url, {
    'sec-fetch-dest': 'iframe',
    'sec-fetch-site': 'cross-site',
  })
  assert.equal(quiet.statusCode, 200)
  assert.match(
    quiet.headers['content-security-policy'] as string,
    /frame-ancestors https:\/\/app\.example\.com$/,
  )
  // A HEAD request is not a view: it does not use the session.
  const s = await session(card.id)
  const head = await t.app.inject({ method: 'HEAD', url: new URL(s.url).pathname, headers: IFRAME })
  assert.notEqual(head.statusCode, 200)
  assert.equal((await view(s.url)).statusCode, 200)

  assert.equal(frameRefusal({}, ORIGIN, 'https://api.example.com'), null)
  assert.match(
    frameRefusal({ secFetchSite: 'same-origin' }, ORIGIN, 'https://api.example.com')!,
    /own origin/,
  )
  assert.equal(
    frameRefusal({ referer: 'not a url' }, ORIGIN, 'https://api.example.com') !== null,
    true,
  )
})

test('the page is never cached or indexed, framed by the target origin only, with no inline script', async () => {
  const card = await activeCard()
  const page = await view((await session(card.id)).url)
  assert.equal(page.statusCode, 200)
  assert.equal(page.headers['cache-control'], 'no-store')
  assert.equal(page.headers['x-robots-tag'], 'noindex, nofollow, noarchive')
  assert.equal(page.headers['referrer-policy'], 'no-referrer')
  assert.equal(page.headers['x-content-type-options'], 'nosniff')
  assert.equal(
    page.headers['x-frame-options'],
    undefined,
    'frame-ancestors decides, not X-Frame-Options',
  )
  const csp = page.headers['content-security-policy'] as string
  const nonce = /script-src 'nonce-([A-Za-z0-9+/=]+)'/.exec(csp)?.[1]
  assert.ok(nonce, csp)
  assert.match(csp, /^default-src 'none'; /)
  assert.match(csp, new RegExp(`style-src 'nonce-${nonce.replace(/[+/]/g, '\\$&')}'`))
  assert.match(csp, /frame-ancestors https:\/\/app\.example\.com$/)
  assert.match(page.body, /<meta name="robots" content="noindex, nofollow, noarchive">/)
  const scripts = [...page.body.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)]
  assert.equal(scripts.length, 1)
  assert.equal(scripts[0][2], '', 'no inline script')
  assert.match(
    scripts[0][1],
    new RegExp(`src="/card-reveal/copy\\.js" nonce="${nonce.replace(/[+/]/g, '\\$&')}"`),
  )
  assert.ok(!/ on[a-z]+=/.test(page.body), 'no inline event handler')

  const script = await t.app.inject({ method: 'GET', url: '/card-reveal/copy.js' })
  assert.equal(script.statusCode, 200)
  assert.match(script.headers['content-type'] as string, /^text\/javascript/)
  assert.match(script.body, /navigator\.clipboard\.writeText/)
})

test('CSS variables are set by query parameters of the right shape; anything else keeps the default', async () => {
  const card = await activeCard()
  const s = await session(card.id)
  const query =
    '?accent=%23008060&text=rgb(20%2C%2020%2C%2020)&radius=4px&font-size=18px&font-family=Inter%2C%20sans-serif' +
    '&background=red%3B%7Dbody%7Bdisplay%3Anone&label=%3C%2Fstyle%3E&unknown=1'
  const page = await view(s.url, IFRAME, query)
  assert.equal(page.statusCode, 200)
  const root = /:root\{([^}]*)\}/.exec(page.body)?.[1] ?? ''
  assert.match(root, /--svc-accent:#008060/)
  assert.match(root, /--svc-text:rgb\(20, 20, 20\)/)
  assert.match(root, /--svc-radius:4px/)
  assert.match(root, /--svc-font-size:18px/)
  assert.match(root, /--svc-font-family:Inter, sans-serif/)
  assert.match(root, /--svc-background:#ffffff/, 'an injection attempt keeps the default')
  assert.match(root, /--svc-label:#4a5468/)
  assert.ok(!page.body.includes('body{display') && !page.body.includes('</style></style>'))
})

test('a view emits card.details_viewed with the card, the fields and the session; every view is audited', async () => {
  const card = await activeCard()
  const details = await detailsOf(card.id)
  const s = await session(card.id, { fields: ['number', 'expiry'] })
  assert.equal((await view(s.url)).statusCode, 200)
  await view(s.url)

  const events = await t.deps.db
    .selectFrom('events')
    .select(['id', 'type', 'data'])
    .where('type', '=', 'card.details_viewed')
    .execute()
  const mine = events.filter((e) => (e.data as any).object.id === card.id)
  assert.equal(mine.length, 1, 'one event for one view')
  const current = (await t.api(token, 'GET', `/v1/cards/${card.id}`)).json()
  const event = (await t.api(token, 'GET', `/v1/events/${mine[0].id}`)).json()
  assert.equal(event.type, 'card.details_viewed')
  assert.deepEqual(event.data.object, current)
  assert.deepEqual(event.data.fields, ['number', 'expiry'])
  assert.equal(event.data.reveal_session_id, s.id)
  assert.ok(!JSON.stringify(event).includes(details.number))
  const reader = await tenant.token('cards:read')
  assert.equal((await t.api(reader, 'GET', `/v1/events/${mine[0].id}`)).statusCode, 200)

  const rows = await auditRows(card.id)
  assert.deepEqual(
    rows.map((r) => [r.operation, r.outcome]),
    [
      ['details.reveal', 'succeeded'],
      ['reveal_session.create', 'succeeded'],
      ['details.view', 'succeeded'],
      ['details.view', 'reveal_session_used'],
    ],
  )
  for (const row of rows) {
    assert.equal(row.client_id, tenant.clientId)
    assert.equal(row.organization_id, tenant.organizationId)
    assert.match(row.request_id, /^req_/)
    assert.ok(!JSON.stringify(row).includes(details.number))
  }
  const logs = logLines.join('\n')
  assert.ok(logs.includes('"route":"/card-reveal/:token"'), 'the views were logged')
  assert.ok(!logs.includes(details.number), 'a PAN was logged')
  assert.ok(!logs.includes(new URL(s.url).pathname.slice(-43)), 'a page token was logged')
})

test('a card closed after the session was made, or a processor failure, shows a page without the number', async () => {
  const card = await activeCard()
  const details = await detailsOf(card.id)
  const failing = await session(card.id)
  await t.api(token, 'POST', '/v1/simulate/processor_faults', {
    operation: 'reveal_details',
    error: 'processor_unavailable',
    count: 1,
  })
  const failed = await view(failing.url)
  assert.equal(failed.statusCode, 503)
  assert.match(failed.body, /could not be loaded/)
  assert.ok(!failed.body.includes(details.number))
  assert.equal((await view(failing.url)).statusCode, 410, 'a failed view used the session too')

  const s = await session(card.id)
  await t.api(token, 'POST', `/v1/cards/${card.id}/close`)
  const page = await view(s.url)
  assert.equal(page.statusCode, 409)
  assert.match(page.body, /not available/)
  assert.ok(!page.body.includes(details.number))
  assert.deepEqual(await eventsFor(t, card.id, 'card.details_viewed'), [])
  const outcomes = (await auditRows(card.id)).map((r) => [r.operation, r.outcome])
  assert.deepEqual(outcomes.slice(-3), [
    ['details.view', 'reveal_session_used'],
    ['reveal_session.create', 'succeeded'],
    ['details.view', 'card_closed'],
  ])
})

test('sim_basic cards get sessions too; the page reads their number from their processor', async () => {
  const card = await activeCard(tenant.programs.basic.id)
  const details = await detailsOf(card.id)
  const page = await view((await session(card.id)).url)
  assert.equal(page.statusCode, 200)
  assert.ok(page.body.includes(grouped(details.number)))
})
