/**
 * The traveller page (docs/traveller-page.md): `POST /v1/esim/h5_links` with `sections`, `allow_purchases` and
 * `pay_from_account_id`; the cards section (masked cards, recent payments in both currencies, freeze and unfreeze by
 * the cardholder, card details through a hosted reveal page of the service's own origin); the balance section;
 * purchases debited from the named account. The link scopes everything to its cardholder.
 */
import assert from 'node:assert/strict'
import { generateKeyPairSync } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { LightMyRequestResponse } from 'fastify'
import { compactDecrypt } from 'jose'
import { formatMoney } from '../../src/lib/money-format.js'
import { eventsFor, expectError } from '../helpers/api.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { cardBody, issuedCard, makeAccount, makeCardholder, runJobs } from '../cards/support.js'
import { authorize } from '../authorizations/support.js'
import { packageFor } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
/** The traveller: a USD account with 500.00, an active card with a euro payment; `other` is another cardholder. */
let holder: any
let account: any
let card: any
let euroTxn: any
let other: { holder: any; account: any; card: any }
let details: { number: string; cvc: string }

async function funded(balance: number) {
  const h = await makeCardholder(t, token)
  const a = await makeAccount(t, token, tenant.programs.full.id, h.id)
  if (balance > 0) {
    const res = await t.api(token, 'POST', `/v1/accounts/${a.id}/credit`, { amount: balance })
    assert.equal(res.statusCode, 200, res.body)
  }
  const c = await issuedCard(t, token, cardBody(h.id, a.id))
  return { holder: h, account: a, card: c }
}

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
  token = await tenant.token()
  const sim = await t.api(token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })
  assert.equal(sim.statusCode, 200, sim.body)
  ;({ holder, account, card } = await funded(50_000))
  other = await funded(10_000)
  const pinned = await t.api(token, 'PUT', '/v1/simulate/fx_rates/EUR/USD', { rate: '1.1' })
  assert.equal(pinned.statusCode, 200, pinned.body)
  const auth = await authorize(t, token, card.id, 4_000, {
    currency: 'EUR',
    merchant: { name: 'Café de Flore', mcc: '5814', city: 'Paris', country: 'FRA' },
  })
  const captured = await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, {})
  assert.equal(captured.statusCode, 201, captured.body)
  euroTxn = captured.json()
  assert.equal(euroTxn.merchant_currency, 'EUR')
  assert.notEqual(euroTxn.currency, 'EUR')
  const keys = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const res = await t.api(token, 'POST', `/v1/cards/${card.id}/details`, {
    public_key: keys.publicKey.export({ format: 'jwk' }),
  })
  assert.ok(res.statusCode < 300, res.body)
  const { plaintext } = await compactDecrypt(res.json().encrypted_details, keys.privateKey)
  details = JSON.parse(new TextDecoder().decode(plaintext))
})
after(async () => {
  await t.close()
})

const createLink = (body: Record<string, unknown>, as = token) =>
  t.api(as, 'POST', '/v1/esim/h5_links', body)

async function link(body: Record<string, unknown>): Promise<any> {
  const res = await createLink(body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

const pathOf = (url: string) => new URL(url).pathname
const open = (path: string, headers: Record<string, string> = {}) =>
  t.app.inject({ method: 'GET', url: path, headers })

/** Opens the page like a browser: its cookie and CSRF token. */
async function session(
  path: string,
): Promise<{ page: LightMyRequestResponse; cookie: string; csrf: string }> {
  const page = await open(path)
  assert.equal(page.statusCode, 200, page.body)
  const cookie = String(page.headers['set-cookie']).split(';')[0]
  const csrf = /name="csrf_token" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
  return { page, cookie, csrf }
}

const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: path,
    payload: new URLSearchParams(form).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  })

const cardStatus = async (id: string) =>
  (await t.api(token, 'GET', `/v1/cards/${id}`)).json().status as string

/** The page source carries neither the card number nor its CVC, in any spacing. */
function assertNoSecrets(body: string): void {
  const digits = body.replace(/[\s\u00a0]/g, '')
  assert.equal(digits.includes(details.number), false, 'no card number in the page')
  assert.equal(body.includes(details.number.replace(/(\d{4})(?=\d)/g, '$1 ')), false)
  for (const shape of [`>${details.cvc}<`, `"${details.cvc}"`, `: ${details.cvc}`])
    assert.equal(body.includes(shape), false, 'no CVC in the page')
}

describe('creating a traveller page link', () => {
  test('sections default to the eSIMs, as before; named sections come back in the order given, a repeat folded', async () => {
    const plain = await link({ cardholder_id: holder.id })
    assert.deepEqual(plain.sections, ['esims'])
    assert.equal(plain.pay_from_account_id, null)
    assert.equal(plain.allow_purchases, false)
    const page = await open(pathOf(plain.url))
    assert.equal(page.statusCode, 200)
    assert.match(page.body, /here are your eSIMs/)
    assert.equal(page.body.includes('id="cards-h"'), false)
    assert.equal(page.body.includes('id="balance-h"'), false)

    const all = await link({
      cardholder_id: holder.id,
      sections: ['cards', 'balance', 'cards', 'esims'],
      allow_purchases: true,
      pay_from_account_id: account.id,
    })
    assert.deepEqual(all.sections, ['cards', 'balance', 'esims'])
    assert.equal(all.pay_from_account_id, account.id)
    const body = (await open(pathOf(all.url))).body
    const order = ['id="cards-h"', 'id="balance-h"', 'id="esims-h"'].map((h) => body.indexOf(h))
    assert.ok(
      order.every((i) => i > 0),
      'every section is shown',
    )
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      order,
      'in the order asked for',
    )
  })

  test('bad input is refused naming its parameter', async () => {
    expectError(
      await createLink({ cardholder_id: holder.id, sections: ['esims', 'wallet'] }),
      400,
      'invalid_parameter',
      'sections',
    )
    expectError(
      await createLink({ cardholder_id: holder.id, sections: [] }),
      400,
      'invalid_parameter',
      'sections',
    )
    expectError(
      await createLink({ cardholder_id: holder.id, sections: 'cards' }),
      400,
      'invalid_parameter',
      'sections',
    )
    expectError(
      await createLink({ cardholder_id: holder.id, sections: ['cards'], allow_purchases: true }),
      400,
      'invalid_parameter',
      'allow_purchases',
    )
    // Another cardholder's account, an unknown one, and one named without purchases.
    expectError(
      await createLink({
        cardholder_id: holder.id,
        allow_purchases: true,
        pay_from_account_id: other.account.id,
      }),
      422,
      'account_cardholder_mismatch',
      'pay_from_account_id',
    )
    expectError(
      await createLink({
        cardholder_id: holder.id,
        allow_purchases: true,
        pay_from_account_id: 'acct_00000000000000000000000000',
      }),
      404,
      'account_not_found',
      'pay_from_account_id',
    )
    expectError(
      await createLink({ cardholder_id: holder.id, pay_from_account_id: account.id }),
      400,
      'invalid_parameter',
      'pay_from_account_id',
    )
    const stranger = await (await createTenant(t)).token()
    expectError(
      await t.api(stranger, 'POST', '/v1/esim/h5_links', {
        cardholder_id: holder.id,
        sections: ['cards'],
      }),
      404,
      'cardholder_not_found',
    )
  })

  test('the cards section needs cards:write and the balance accounts:read; details need cards:secrets', async () => {
    const esimOnly = await tenant.token('esim:write')
    expectError(
      await createLink({ cardholder_id: holder.id, sections: ['cards'] }, esimOnly),
      403,
      'insufficient_scope',
    )
    expectError(
      await createLink({ cardholder_id: holder.id, sections: ['balance'] }, esimOnly),
      403,
      'insufficient_scope',
    )
    const noSecrets = await tenant.token('esim:write cards:write')
    const res = await createLink({ cardholder_id: holder.id, sections: ['cards'] }, noSecrets)
    assert.equal(res.statusCode, 201, res.body)
    const path = pathOf(res.json().url)
    const { page, cookie, csrf } = await session(path)
    assert.ok(page.body.includes(`data-card-id="${card.id}"`))
    assert.equal(page.body.includes('Show details'), false, 'no details without cards:secrets')
    const refused = await post(`${path}/cards/${card.id}/reveal`, { csrf_token: csrf }, { cookie })
    assert.equal(refused.statusCode, 303)
    assert.match(String(refused.headers.location), /notice=card_unavailable$/)
  })
})

describe('the cards section', () => {
  test('each card is masked with its expiry and status, its payments show both amounts, and the page holds no secret', async () => {
    const l = await link({ cardholder_id: holder.id, sections: ['cards', 'balance'] })
    const page = await open(pathOf(l.url))
    assert.equal(page.statusCode, 200)
    const html = page.body
    assert.ok(html.includes(`Visa •••• ${card.last4}`) || html.includes(`•••• ${card.last4}`))
    assert.ok(html.includes(`Expires ${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`))
    assert.ok(html.includes('>Active<'))
    assert.ok(html.includes(`data-transaction-id="${euroTxn.id}"`))
    assert.ok(html.includes('Café de Flore'))
    assert.ok(
      html.includes(formatMoney(euroTxn.merchant_amount, 'EUR')),
      'the merchant amount in euros',
    )
    assert.ok(
      html.includes(`−${formatMoney(euroTxn.amount, euroTxn.currency)}`),
      'the account amount',
    )
    assert.equal(html.includes(other.card.id), false, "another cardholder's card is not shown")
    assert.equal(
      html.includes(other.account.id),
      false,
      "another cardholder's account is not shown",
    )
    assert.ok(html.includes(`data-account-id="${account.id}"`))
    assertNoSecrets(html)
    const csp = String(page.headers['content-security-policy'])
    assert.ok(csp.includes("frame-src 'self'"), csp)
    assert.ok(csp.includes("frame-ancestors 'none'"), csp)
  })

  test('the cardholder freezes and unfreezes a card; the events name the cardholder on this link', async () => {
    const l = await link({ cardholder_id: holder.id, sections: ['cards'] })
    const path = pathOf(l.url)
    const { cookie, csrf } = await session(path)
    const frozen = await post(`${path}/cards/${card.id}/freeze`, { csrf_token: csrf }, { cookie })
    assert.equal(frozen.statusCode, 303, frozen.body)
    assert.match(String(frozen.headers.location), /notice=card_frozen$/)
    assert.equal(await cardStatus(card.id), 'frozen')
    const shown = await open(`${path}?notice=card_frozen`, { cookie })
    assert.ok(shown.body.includes('Your card is frozen'))
    assert.ok(shown.body.includes('Unfreeze card'))
    const unfrozen = await post(
      `${path}/cards/${card.id}/unfreeze`,
      { csrf_token: csrf },
      { cookie },
    )
    assert.match(String(unfrozen.headers.location), /notice=card_unfrozen$/)
    assert.equal(await cardStatus(card.id), 'active')
    const [freezeEvent] = (await eventsFor(t, card.id, 'card.frozen')).slice(-1)
    assert.equal(freezeEvent.data.actor, 'cardholder')
    assert.equal(freezeEvent.data.h5_link_id, l.id)
    const [unfreezeEvent] = (await eventsFor(t, card.id, 'card.unfrozen')).slice(-1)
    assert.equal(unfreezeEvent.data.actor, 'cardholder')

    // The API's own freeze says the organization did it.
    assert.equal((await t.api(token, 'POST', `/v1/cards/${card.id}/freeze`)).statusCode, 200)
    const [apiEvent] = (await eventsFor(t, card.id, 'card.frozen')).slice(-1)
    assert.equal(apiEvent.data.actor, 'organization')
    assert.equal(apiEvent.data.h5_link_id, null)
    assert.equal((await t.api(token, 'POST', `/v1/cards/${card.id}/unfreeze`)).statusCode, 200)
  })

  test("another cardholder's card is never frozen or revealed through the link; forged forms are refused", async () => {
    const l = await link({ cardholder_id: holder.id, sections: ['cards'] })
    const path = pathOf(l.url)
    const { cookie, csrf } = await session(path)
    for (const op of ['freeze', 'reveal']) {
      const res = await post(
        `${path}/cards/${other.card.id}/${op}`,
        { csrf_token: csrf },
        { cookie },
      )
      assert.equal(res.statusCode, 303, res.body)
      assert.match(String(res.headers.location), /notice=card_unavailable$/)
    }
    assert.equal(await cardStatus(other.card.id), 'active')
    const sessions = await t.deps.db
      .selectFrom('card_reveal_sessions')
      .select('id')
      .where('card_id', '=', other.card.id)
      .execute()
    assert.equal(sessions.length, 0, 'no reveal session for the other card')
    // Without the CSRF token, with another browser's cookie, or from another origin: 403, nothing changes.
    for (const [form, headers] of [
      [{}, { cookie }],
      [{ csrf_token: csrf }, {}],
      [{ csrf_token: csrf }, { cookie: `svc_h5_csrf=${'x'.repeat(32)}` }],
      [{ csrf_token: csrf }, { cookie, origin: 'https://evil.example' }],
    ] as [Record<string, string>, Record<string, string>][]) {
      const res = await post(`${path}/cards/${card.id}/freeze`, form, headers)
      assert.equal(res.statusCode, 403, res.body)
    }
    assert.equal(await cardStatus(card.id), 'active')
    // A link without the cards section has no card forms.
    const esims = await link({ cardholder_id: holder.id })
    const s = await session(pathOf(esims.url))
    const res = await post(
      `${pathOf(esims.url)}/cards/${card.id}/freeze`,
      { csrf_token: s.csrf },
      { cookie: s.cookie },
    )
    assert.equal(res.statusCode, 403)
    assert.equal(await cardStatus(card.id), 'active')
  })

  test('"Show details" embeds a single-use hosted details frame of the service\'s own origin; the view is audited and emits card.details_viewed', async () => {
    const l = await link({ cardholder_id: holder.id, sections: ['cards'] })
    const path = pathOf(l.url)
    const { page, cookie, csrf } = await session(path)
    assert.ok(page.body.includes('Show details'))
    const shown = await post(`${path}/cards/${card.id}/reveal`, { csrf_token: csrf }, { cookie })
    assert.equal(shown.statusCode, 200, shown.body)
    assert.equal(shown.headers['cache-control'], 'no-store')
    const src = /<iframe src="(\/card-reveal\/[A-Za-z0-9_-]{43})"/.exec(shown.body)?.[1]
    assert.ok(src, 'the page embeds the details frame')
    assertNoSecrets(shown.body)
    const session_ = await t.deps.db
      .selectFrom('card_reveal_sessions')
      .selectAll()
      .where('card_id', '=', card.id)
      .orderBy('id', 'desc')
      .executeTakeFirstOrThrow()
    assert.equal(session_.target_origin, new URL(t.deps.config.baseUrl).origin)
    assert.equal(session_.client_id, `h5:${l.id}`)

    // What the browser sends for the frame of a same-origin page that sends no Referer.
    const frame = await open(src, {
      'sec-fetch-dest': 'iframe',
      'sec-fetch-mode': 'navigate',
      'sec-fetch-site': 'same-origin',
    })
    assert.equal(frame.statusCode, 200, frame.body)
    assert.ok(frame.body.replace(/\s/g, '').includes(details.number))
    assert.match(String(frame.headers['content-security-policy']), /frame-ancestors 'self'/)
    const viewed = await eventsFor(t, card.id, 'card.details_viewed')
    assert.equal(viewed.at(-1)?.data.reveal_session_id, session_.id)
    const audit = await t.deps.db
      .selectFrom('card_secret_audit')
      .select(['operation', 'outcome', 'client_id'])
      .where('card_id', '=', card.id)
      .execute()
    assert.ok(
      audit.some(
        (a) =>
          a.operation === 'details.view' &&
          a.outcome === 'succeeded' &&
          a.client_id === `h5:${l.id}`,
      ),
      JSON.stringify(audit),
    )
    // Single use: a second view shows nothing.
    assert.equal(
      (
        await open(src, {
          'sec-fetch-dest': 'iframe',
          'sec-fetch-site': 'same-origin',
        })
      ).statusCode,
      410,
    )
  })

  test('an expired link refuses the card forms and shows nothing', async () => {
    const l = await link({ cardholder_id: holder.id, sections: ['cards'] })
    const path = pathOf(l.url)
    const { cookie, csrf } = await session(path)
    t.clock.advance(15 * 60 * 1000 + 1000)
    try {
      const res = await post(`${path}/cards/${card.id}/freeze`, { csrf_token: csrf }, { cookie })
      assert.equal(res.statusCode, 410)
      assert.equal((await open(path)).statusCode, 410)
    } finally {
      t.clock.reset()
    }
    assert.equal(await cardStatus(card.id), 'active')
  })
})

describe('purchases paid from an account', () => {
  test('a purchase on the page debits pay_from_account_id; one it cannot pay says so and charges nothing', async () => {
    const pkg = await packageFor(t, token, 'country=FRA&region=local')
    const l = await link({
      cardholder_id: holder.id,
      sections: ['esims', 'balance'],
      allow_purchases: true,
      pay_from_account_id: account.id,
    })
    const path = pathOf(l.url)
    const { page, cookie, csrf } = await session(path)
    assert.match(page.body, /Purchases are paid from your USD account/)
    const nonce = /name="nonce" value="([^"]+)"/.exec(page.body)?.[1] ?? ''
    const before = (await t.api(token, 'GET', `/v1/accounts/${account.id}`)).json()
    const res = await post(
      `${path}/orders`,
      { package_id: pkg.id, nonce, csrf_token: csrf },
      { cookie },
    )
    assert.equal(res.statusCode, 303, res.body)
    assert.match(String(res.headers.location), /notice=ordered$/)
    const orders = (
      await t.api(token, 'GET', `/v1/esim/orders?reference=h5_${l.id}_${nonce}`)
    ).json().data
    assert.equal(orders.length, 1)
    assert.equal(orders[0].account_id, account.id)
    const afterBuy = (await t.api(token, 'GET', `/v1/accounts/${account.id}`)).json()
    assert.equal(afterBuy.ledger_balance, before.ledger_balance - orders[0].charged_amount)
    assert.ok(orders[0].charged_amount > 0)

    // An empty euro account pays for the dollar price converted: not enough, the page says so, nothing is bought.
    const pinned = await t.api(token, 'PUT', '/v1/simulate/fx_rates/USD/EUR', { rate: '0.92' })
    assert.equal(pinned.statusCode, 200, pinned.body)
    const opened = await t.api(token, 'POST', '/v1/accounts', {
      program_id: tenant.programs.full.id,
      cardholder_id: holder.id,
      currency: 'EUR',
    })
    assert.equal(opened.statusCode, 201, opened.body)
    await runJobs(t)
    const poor = opened.json()
    const l2 = await link({
      cardholder_id: holder.id,
      allow_purchases: true,
      pay_from_account_id: poor.id,
    })
    const s2 = await session(pathOf(l2.url))
    const nonce2 = /name="nonce" value="([^"]+)"/.exec(s2.page.body)?.[1] ?? ''
    const refused = await post(
      `${pathOf(l2.url)}/orders`,
      { package_id: pkg.id, nonce: nonce2, csrf_token: s2.csrf },
      { cookie: s2.cookie },
    )
    assert.match(String(refused.headers.location), /notice=insufficient_funds$/)
    const shown = await open(`${pathOf(l2.url)}?notice=insufficient_funds`, { cookie: s2.cookie })
    assert.ok(shown.body.includes('does not have enough money'))
    assert.equal((await t.api(token, 'GET', `/v1/accounts/${poor.id}`)).json().ledger_balance, 0)
  })
})
