import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { BASE_URL, createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { auditRows, csrfOf, follow, formFields, main, person, type Person } from './support.js'

/**
 * The console's card-issuing pages (cardholders, accounts, cards, authorizations, transactions, disputes): lists,
 * detail pages and their links, the role guard, the sandbox tools (absent and refused in production), the one-time
 * key of every change form, decline reasons and errors in words.
 */

let t: TestApp
let tenant: TestClient
let token: string
let owner: Person
let viewer: Person

withTenant(async (fixture) => {
  ;({ t, tenant, token } = fixture)
  owner = await person(t, 'owner', tenant.organizationId)
  viewer = await person(t, 'viewer', tenant.organizationId)
})

async function api(method: string, url: string, body?: unknown, tok = token) {
  const res = await t.api(tok, method, url, body)
  assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

let seq = 0
/** A cardholder with approved KYC, a funded USD account and an active virtual card, made through the API. */
async function activeCard(tok = token, programId = tenant.programs.full.id) {
  const n = ++seq
  const chd = await api(
    'POST',
    '/v1/cardholders',
    {
      type: 'individual',
      first_name: 'Ada',
      last_name: `Lovelace${n}`,
      email: `ada${n}.${Date.now()}@example.test`,
      address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
      identity_document: { type: 'passport', number: `P${n}X` },
    },
    tok,
  )
  await api(
    'POST',
    `/v1/cardholders/${chd.id}/kyc`,
    {
      status: 'approved',
      provider: 'Test',
      verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
    },
    tok,
  )
  const acct = await api(
    'POST',
    '/v1/accounts',
    { program_id: programId, cardholder_id: chd.id, currency: 'USD' },
    tok,
  )
  const card = await api(
    'POST',
    '/v1/cards',
    {
      cardholder_id: chd.id,
      account_id: acct.id,
      form_factor: 'virtual',
      card_type: 'debit',
      embossed_name: 'ADA LOVELACE',
      delivery_address: {
        name: 'Ada',
        line1: '1 Main St',
        city: 'Springfield',
        postal_code: '12345',
        country: 'USA',
      },
    },
    tok,
  )
  return { chd, acct, card }
}

async function issue(cardId: string, tok = token) {
  return api('POST', `/v1/simulate/cards/${cardId}/issue`, {}, tok)
}

async function auditCount(action: string): Promise<number> {
  return (await auditRows(t, action, tenant.organizationId)).length
}

describe('lists', () => {
  test('the cardholder list shows 25 a page, newest first, and the next page carries on from there', async () => {
    const made: string[] = []
    for (let i = 0; i < 27; i++) {
      made.push(
        (
          await api('POST', '/v1/cardholders', {
            type: 'individual',
            first_name: 'Page',
            last_name: `P${i}`,
            email: `page${i}.${Date.now()}@example.test`,
          })
        ).id,
      )
    }
    const first = await owner.agent.get('/console/cardholders')
    assert.equal(first.statusCode, 200)
    const ids = (body: string) =>
      [...main(body).matchAll(/href="\/console\/cardholders\/(chd_[0-9A-Za-z]+)"/g)].map(
        (m) => m[1],
      )
    const page1 = ids(first.body)
    assert.equal(page1.length, 25)
    assert.equal(page1[0], made[26], 'newest first')
    const next = /<a href="([^"]*after=[^"]*)">Next page<\/a>/.exec(first.body)
    assert.ok(next, 'a next page link')
    const second = await owner.agent.get(next[1].replace(/&amp;/g, '&'))
    assert.equal(second.statusCode, 200)
    const page2 = ids(second.body)
    assert.ok(
      page2.includes(made[0]) && page2.includes(made[1]),
      'the oldest ones are on the next page',
    )
    assert.equal(page2.filter((id) => page1.includes(id)).length, 0, 'no row twice')
    // The filter keeps its value and narrows the list.
    const filtered = await owner.agent.get('/console/cardholders?kyc_status=approved')
    assert.equal(filtered.statusCode, 200)
    assert.equal(ids(filtered.body).filter((id) => made.includes(id)).length, 0)
  })

  test('each list page renders and names its objects', async () => {
    await activeCard()
    for (const path of [
      '/console/accounts',
      '/console/cards',
      '/console/authorizations',
      '/console/transactions',
      '/console/disputes',
    ]) {
      const res = await owner.agent.get(path)
      assert.equal(res.statusCode, 200, path)
      assert.doesNotMatch(res.body, /not in the console yet/, path)
    }
    const nav = await owner.agent.get('/console')
    for (const label of [
      'Cardholders',
      'Accounts',
      'Cards',
      'Authorizations',
      'Transactions',
      'Disputes',
    ])
      assert.match(nav.body, new RegExp(`>${label}</a>`))
  })
})

describe('detail pages', () => {
  test('each object page links the objects related to it, with money in the currency units', async () => {
    const { chd, acct, card } = await activeCard()
    await issue(card.id)
    await api('POST', `/v1/accounts/${acct.id}/credit`, { amount: 5000 })
    const auth = await api('POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 1250,
      currency: 'USD',
      merchant: { name: 'Corner Cafe', mcc: '5814', country: 'USA' },
    })

    const cardholder = main((await owner.agent.get(`/console/cardholders/${chd.id}`)).body)
    assert.match(cardholder, new RegExp(`href="/console/accounts/${acct.id}"`))
    assert.match(cardholder, new RegExp(`href="/console/cards/${card.id}"`))

    const account = main((await owner.agent.get(`/console/accounts/${acct.id}`)).body)
    assert.match(account, new RegExp(`href="/console/cardholders/${chd.id}"`))
    assert.match(account, new RegExp(`href="/console/cards/${card.id}"`))
    assert.match(
      account,
      new RegExp(`href="/console/authorizations/${auth.id}"`),
      'the hold links its authorization',
    )
    assert.match(account, /\$12\.50 USD/, 'the hold in dollars, not 1250')
    assert.match(account, /\$37\.50 USD/, 'the available balance')

    const cardPage = main((await owner.agent.get(`/console/cards/${card.id}`)).body)
    for (const href of [
      `/console/cardholders/${chd.id}`,
      `/console/accounts/${acct.id}`,
      `/console/authorizations/${auth.id}`,
    ])
      assert.match(cardPage, new RegExp(`href="${href}"`))
    const full = await api('GET', `/v1/cards/${card.id}`)
    assert.match(cardPage, new RegExp(`•••• ${full.last4}`))

    const authPage = main((await owner.agent.get(`/console/authorizations/${auth.id}`)).body)
    assert.match(authPage, new RegExp(`href="/console/cards/${card.id}"`))
    assert.match(authPage, new RegExp(`href="/console/accounts/${acct.id}"`))
    assert.match(
      authPage,
      /href="\/console\/developers\/events\/evt_[0-9A-Za-z]+"/,
      'its events link to the event page',
    )

    const missing = await owner.agent.get('/console/cards/card_01JD000000000000000000000Z')
    assert.equal(missing.statusCode, 404)
    assert.match(missing.body, /errors#card_not_found/)
  })
})

describe('roles', () => {
  test('a viewer reads the pages without any change form, and a change posted anyway is refused 403', async () => {
    const { chd, acct, card } = await activeCard()
    await issue(card.id)
    for (const path of [
      `/console/cardholders/${chd.id}`,
      `/console/accounts/${acct.id}`,
      `/console/cards/${card.id}`,
      '/console/cardholders',
    ]) {
      const res = await viewer.agent.get(path)
      assert.equal(res.statusCode, 200, path)
      assert.doesNotMatch(
        main(res.body),
        /<form method="post"/,
        `${path}: no change form for a viewer`,
      )
      assert.doesNotMatch(main(res.body), /Sandbox<\/span>/, `${path}: no sandbox tools`)
    }
    const csrf = csrfOf((await viewer.agent.get(`/console/cards/${card.id}`)).body)
    const freeze = await viewer.agent.post(`/console/cards/${card.id}/freeze`, {
      _csrf: csrf,
      idempotency_key: 'viewer-1',
    })
    assert.equal(freeze.statusCode, 403)
    const simulate = await viewer.agent.post(`/console/cards/${card.id}/authorizations`, {
      _csrf: csrf,
      idempotency_key: 'viewer-2',
      amount: '1.00',
      currency: 'USD',
      merchant_name: 'X',
    })
    assert.equal(simulate.statusCode, 403)
    assert.equal((await api('GET', `/v1/cards/${card.id}`)).status, 'active')
    assert.equal((await api('GET', `/v1/authorizations?card_id=${card.id}`)).data.length, 0)
  })

  test('closing a card asks on a page of its own first: the card page only links there', async () => {
    const { card } = await activeCard()
    await issue(card.id)
    const page = await owner.agent.get(`/console/cards/${card.id}`)
    assert.doesNotMatch(page.body, new RegExp(`action="/console/cards/${card.id}/close"`))
    assert.match(
      page.body,
      new RegExp(`<a href="/console/cards/${card.id}/close">Close this card…</a>`),
    )
    const confirm = await owner.agent.get(`/console/cards/${card.id}/close`)
    assert.equal(confirm.statusCode, 200)
    assert.match(confirm.body, /This cannot be undone/)
    assert.match(
      confirm.body,
      new RegExp(`<a href="/console/cards/${card.id}">Cancel: keep the card</a>`),
    )
    assert.equal(
      (await api('GET', `/v1/cards/${card.id}`)).status,
      'active',
      'asking changes nothing',
    )
    const closed = await follow(
      owner.agent,
      await owner.agent.post(
        `/console/cards/${card.id}/close`,
        formFields(confirm.body, `/console/cards/${card.id}/close`),
      ),
    )
    assert.match(closed.body, /Card closed\./)
    assert.equal((await api('GET', `/v1/cards/${card.id}`)).status, 'closed')
    const again = await owner.agent.get(`/console/cards/${card.id}/close`)
    assert.equal(again.statusCode, 303)
    const viewerAsk = await viewer.agent.get(`/console/cards/${card.id}/close`)
    assert.notEqual(viewerAsk.statusCode, 200, 'a viewer is not asked')
  })

  test('an owner freezes and unfreezes a card, each change written to the audit log', async () => {
    const { card } = await activeCard()
    await issue(card.id)
    const before = await auditCount('card.frozen')
    const page = await owner.agent.get(`/console/cards/${card.id}`)
    const frozen = await follow(
      owner.agent,
      await owner.agent.post(
        `/console/cards/${card.id}/freeze`,
        formFields(page.body, `/console/cards/${card.id}/freeze`),
      ),
    )
    assert.match(frozen.body, /Card frozen\./)
    assert.equal((await api('GET', `/v1/cards/${card.id}`)).status, 'frozen')
    assert.equal(await auditCount('card.frozen'), before + 1)
    await follow(
      owner.agent,
      await owner.agent.post(
        `/console/cards/${card.id}/unfreeze`,
        formFields(frozen.body, `/console/cards/${card.id}/unfreeze`),
      ),
    )
    assert.equal((await api('GET', `/v1/cards/${card.id}`)).status, 'active')

    // Spending controls: every interval and list is on the form, in dollars, filled with what the card has (a weekly
    // limit set through the API shows as 900.00, and is kept by sending the form as shown).
    await api('PATCH', `/v1/cards/${card.id}`, {
      spending_controls: { spending_limits: [{ amount: 90_000, interval: 'weekly' }] },
    })
    const page2 = await owner.agent.get(`/console/cards/${card.id}`)
    for (const name of [
      'per_authorization',
      'daily',
      'weekly',
      'monthly',
      'all_time',
      'allowed_mccs',
      'blocked_mccs',
      'allowed_countries',
      'blocked_countries',
    ]) {
      assert.match(page2.body, new RegExp(`name="${name}"`), `the controls form has ${name}`)
    }
    assert.match(page2.body, /name="weekly" type="text" value="900\.00"/)
    const saved = await follow(
      owner.agent,
      await owner.agent.post(`/console/cards/${card.id}/controls`, {
        ...formFields(page2.body, `/console/cards/${card.id}/controls`),
        currency: 'USD',
        per_authorization: '25.00',
        daily: '',
        weekly: '900.00',
        monthly: '',
        all_time: '',
        allowed_mccs: '',
        blocked_mccs: '7995',
        allowed_countries: '',
        blocked_countries: 'prk',
      }),
    )
    const controls = (await api('GET', `/v1/cards/${card.id}`)).spending_controls
    assert.deepEqual(controls.spending_limits.map((l: any) => `${l.interval}:${l.amount}`).sort(), [
      'per_authorization:2500',
      'weekly:90000',
    ])
    assert.deepEqual(controls.blocked_mccs, ['7995'])
    assert.deepEqual(controls.blocked_countries, ['PRK'])
    assert.match(main(saved.body), /per authorization limit \$25\.00 USD/)
  })
})

describe('sandbox tools', () => {
  test('a double-submitted "Simulate authorization" form creates one authorization', async () => {
    const { acct, card } = await activeCard()
    await issue(card.id)
    await api('POST', `/v1/accounts/${acct.id}/credit`, { amount: 10_000 })
    const page = await owner.agent.get(`/console/cards/${card.id}`)
    const fields = {
      ...formFields(page.body, `/console/cards/${card.id}/authorizations`),
      amount: '12.50',
      currency: 'USD',
      merchant_name: 'Corner Cafe',
      mcc: '5814',
      country: 'USA',
    }
    const audits = await auditCount('simulate.authorization')
    const [one, two] = await Promise.all([
      owner.agent.post(`/console/cards/${card.id}/authorizations`, fields),
      owner.agent.post(`/console/cards/${card.id}/authorizations`, fields),
    ])
    const again = await owner.agent.post(`/console/cards/${card.id}/authorizations`, fields)
    const list = await api('GET', `/v1/authorizations?card_id=${card.id}`)
    assert.equal(list.data.length, 1, 'one authorization')
    assert.equal(list.data[0].amount, 1250)
    const target = `/console/authorizations/${list.data[0].id}`
    for (const res of [one, two]) {
      assert.equal(res.statusCode, 303, res.body.slice(0, 300))
      assert.equal(res.headers.location, target, 'both clicks land on the one authorization')
    }
    assert.equal(again.statusCode, 303)
    assert.equal(again.headers.location, target, 'the resent form leads to the same authorization')
    const shown = await owner.agent.get(target)
    assert.match(shown.body, /already sent/)
    assert.equal((await api('GET', `/v1/accounts/${acct.id}`)).held_balance, 1250, 'held once')
    assert.equal(await auditCount('simulate.authorization'), audits + 1, 'one audit row')

    // The same key with another body is the API's idempotency_key_reuse, in words; nothing more is authorized.
    const reused = await owner.agent.post(`/console/cards/${card.id}/authorizations`, {
      ...fields,
      amount: '13.00',
    })
    assert.equal(reused.statusCode, 409)
    assert.match(reused.body, /already used with a different request body/)
    assert.match(reused.body, new RegExp(`href="${BASE_URL}/docs/errors#idempotency_key_reuse"`))
    assert.equal((await api('GET', `/v1/authorizations?card_id=${card.id}`)).data.length, 1)
  })

  test('a declined authorization shows its decline reason in words', async () => {
    const { card } = await activeCard()
    await issue(card.id)
    const page = await owner.agent.get(`/console/cards/${card.id}`)
    const res = await owner.agent.post(`/console/cards/${card.id}/authorizations`, {
      ...formFields(page.body, `/console/cards/${card.id}/authorizations`),
      amount: '99.00',
      currency: 'USD',
      merchant_name: 'Hotel Aurora',
      mcc: '7011',
      country: 'PRT',
    })
    const shown = await follow(owner.agent, res)
    const auth = (await api('GET', `/v1/authorizations?card_id=${card.id}`)).data[0]
    assert.equal(auth.decline_reason, 'insufficient_funds')
    assert.match(main(shown.body), /declined: The available balance is lower than the amount\./)
    assert.match(main(shown.body), /<code>insufficient_funds<\/code>/)
  })

  test('a spend in another currency shows both amounts and its conversion, and an increment is asked in the merchant currency', async () => {
    const { acct, card } = await activeCard()
    await issue(card.id)
    await api('POST', `/v1/accounts/${acct.id}/credit`, { amount: 100_000 })
    await api('PUT', '/v1/simulate/fx_rates/EUR/USD', { rate: '1.1' })
    const page = await owner.agent.get(`/console/cards/${card.id}`)
    const res = await owner.agent.post(`/console/cards/${card.id}/authorizations`, {
      ...formFields(page.body, `/console/cards/${card.id}/authorizations`),
      amount: '20.00',
      currency: 'EUR',
      merchant_name: 'Café de Flore',
    })
    const shown = await follow(owner.agent, res)
    const auth = (await api('GET', `/v1/authorizations?card_id=${card.id}`)).data[0]
    assert.equal(auth.amount, 2200)
    assert.equal(auth.merchant_amount, 2000)
    assert.match(main(shown.body), /Merchant amount/)
    assert.match(main(shown.body), /€20\.00/)
    assert.match(main(shown.body), /\$22\.00/)
    assert.match(main(shown.body), /1\.1 USD per EUR, no markup, sandbox rate of <time /)
    const list = await owner.agent.get('/console/authorizations')
    assert.match(main(list.body), /\$22\.00 USD \(€20\.00 EUR\)/)
    // The increment form is in euros: 5.00 more is €5.00, $5.50 held more.
    const detail = await owner.agent.get(`/console/authorizations/${auth.id}`)
    const inc = await owner.agent.post(`/console/authorizations/${auth.id}/increment`, {
      ...formFields(detail.body, `/console/authorizations/${auth.id}/increment`),
      amount: '5.00',
    })
    await follow(owner.agent, inc)
    const raised = await api('GET', `/v1/authorizations/${auth.id}`)
    assert.equal(raised.merchant_amount, 2500)
    assert.equal(raised.amount, 2750)
  })

  test('a capture and a refund in another currency show both amounts and their conversion; both are asked in the merchant currency', async () => {
    const { acct, card } = await activeCard()
    await issue(card.id)
    await api('POST', `/v1/accounts/${acct.id}/credit`, { amount: 100_000 })
    await api('PUT', '/v1/simulate/fx_rates/EUR/USD', { rate: '1.1' })
    const auth = await api('POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 2000,
      currency: 'EUR',
      merchant: { name: 'Café de Flore' },
    })
    await api('PUT', '/v1/simulate/fx_rates/EUR/USD', { rate: '1.2' })
    // The capture tool of a foreign authorization is in euros, re-rated at the rate now: €20.00 is $24.00.
    let page = await owner.agent.get(`/console/authorizations/${auth.id}`)
    assert.match(main(page.body), /Amount \(EUR\)/)
    page = await follow(
      owner.agent,
      await owner.agent.post(`/console/authorizations/${auth.id}/capture`, {
        ...formFields(page.body, `/console/authorizations/${auth.id}/capture`),
        amount: '',
      }),
    )
    const txn = (await api('GET', `/v1/transactions?authorization_id=${auth.id}`)).data[0]
    assert.deepEqual([txn.amount, txn.merchant_amount, txn.fx.rate], [2400, 2000, '1.2'])
    assert.match(main(page.body), /Merchant amount/)
    assert.match(main(page.body), /1\.2 USD per EUR, no markup, sandbox rate of <time /)
    const list = await owner.agent.get('/console/transactions')
    assert.match(main(list.body), /\$24\.00 USD \(€20\.00 EUR\)/)
    const onCard = await owner.agent.get(`/console/cards/${card.id}`)
    assert.match(main(onCard.body), /\$24\.00 USD \(€20\.00 EUR\)/)
    await api('POST', `/v1/simulate/transactions/${txn.id}/settle`)
    await api('PUT', '/v1/simulate/fx_rates/EUR/USD', { rate: '1' })
    // The refund form is in euros too, converted at the refund's rate: €5.00 is $5.00 now.
    page = await owner.agent.get(`/console/transactions/${txn.id}`)
    assert.match(main(page.body), /Amount \(EUR\)/)
    await follow(
      owner.agent,
      await owner.agent.post(`/console/transactions/${txn.id}/refund`, {
        ...formFields(page.body, `/console/transactions/${txn.id}/refund`),
        amount: '5.00',
      }),
    )
    const after = await api('GET', `/v1/transactions/${txn.id}`)
    assert.deepEqual([after.refunded_amount, after.merchant_refunded_amount], [500, 500])
    page = await owner.agent.get(`/console/transactions/${txn.id}`)
    assert.match(main(page.body), /\$5\.00 USD \(€5\.00 EUR\)/)
    assert.match(main(page.body), /all that is left \(€15\.00 EUR\)/)
  })

  test('capture, settle, refund, dispute and resolve through the sandbox tools match the API', async () => {
    const { acct, card } = await activeCard()
    await issue(card.id)
    await api('POST', `/v1/accounts/${acct.id}/credit`, { amount: 10_000 })
    const auth = await api('POST', '/v1/simulate/authorizations', {
      card_id: card.id,
      amount: 4000,
      currency: 'USD',
      merchant: { name: 'Shop' },
    })
    let page = await owner.agent.get(`/console/authorizations/${auth.id}`)
    page = await follow(
      owner.agent,
      await owner.agent.post(`/console/authorizations/${auth.id}/capture`, {
        ...formFields(page.body, `/console/authorizations/${auth.id}/capture`),
        amount: '',
      }),
    )
    const txn = (await api('GET', `/v1/transactions?authorization_id=${auth.id}`)).data[0]
    assert.equal(txn.status, 'pending')
    assert.match(page.body, new RegExp(txn.id))

    // A refund of a pending capture is refused: the message and its documentation.
    const refused = await owner.agent.post(`/console/transactions/${txn.id}/refund`, {
      _csrf: csrfOf(page.body),
      idempotency_key: 'refund-too-early',
      amount: '',
    })
    assert.equal(refused.statusCode, 422)
    assert.match(refused.body, /role="alert"/)
    assert.match(
      refused.body,
      new RegExp(`href="${BASE_URL}/docs/errors#transaction_not_refundable"`),
    )

    page = await follow(
      owner.agent,
      await owner.agent.post(
        `/console/transactions/${txn.id}/settle`,
        formFields(page.body, `/console/transactions/${txn.id}/settle`),
      ),
    )
    assert.equal((await api('GET', `/v1/transactions/${txn.id}`)).status, 'settled')
    page = await follow(
      owner.agent,
      await owner.agent.post(`/console/transactions/${txn.id}/refund`, {
        ...formFields(page.body, `/console/transactions/${txn.id}/refund`),
        amount: '5.00',
        reason: 'requested',
      }),
    )
    assert.equal((await api('GET', `/v1/transactions/${txn.id}`)).refunded_amount, 500)
    page = await owner.agent.get(`/console/transactions/${txn.id}`)
    page = await follow(
      owner.agent,
      await owner.agent.post('/console/disputes', {
        ...formFields(page.body, '/console/disputes'),
        transaction_id: txn.id,
        reason: 'not_received',
        amount: '',
      }),
    )
    const dispute = (await api('GET', `/v1/disputes?transaction_id=${txn.id}`)).data[0]
    assert.equal(dispute.amount, 3500)
    assert.match(page.body, /\$35\.00 USD/)
    const won = await follow(
      owner.agent,
      await owner.agent.post(`/console/disputes/${dispute.id}/resolve`, {
        ...formFields(page.body, `/console/disputes/${dispute.id}/resolve`),
        outcome: 'won',
      }),
    )
    assert.equal((await api('GET', `/v1/disputes/${dispute.id}`)).status, 'won')
    assert.match(won.body, /Dispute won\./)
  })

  test('a malformed amount is refused with the message and doc_url /v1 would give', async () => {
    const { acct } = await activeCard()
    const page = await owner.agent.get(`/console/accounts/${acct.id}`)
    const res = await owner.agent.post(`/console/accounts/${acct.id}/credit`, {
      ...formFields(page.body, `/console/accounts/${acct.id}/credit`),
      amount: '12.345',
    })
    assert.equal(res.statusCode, 400)
    assert.match(res.body, /at most 2 decimals/)
    assert.match(res.body, new RegExp(`href="${BASE_URL}/docs/errors#invalid_parameter"`))
    assert.equal((await api('GET', `/v1/accounts/${acct.id}`)).ledger_balance, 0)
  })

  test('production shows no sandbox tools and refuses their posts', async () => {
    const prod = await createTenant(t, {
      environment: 'production',
      organizationId: tenant.organizationId,
    })
    const program = await t.operator('POST', '/operator/v1/programs', {
      organization_id: tenant.organizationId,
      environment: 'production',
      name: 'Live',
      processor: 'sim_full',
      currencies: ['USD'],
    })
    const prodToken = await prod.token()
    const { chd, card } = await activeCard(prodToken, program.id)
    const agent = owner.agent
    const home = await agent.get('/console')
    const switched = await agent.post('/console/environment', {
      _csrf: csrfOf(home.body),
      environment: 'production',
      return_to: `/console/cards/${card.id}`,
    })
    assert.equal(switched.statusCode, 303)
    try {
      for (const path of [`/console/cards/${card.id}`, `/console/cardholders/${chd.id}`]) {
        const res = await agent.get(path)
        assert.equal(res.statusCode, 200, path)
        assert.doesNotMatch(
          main(res.body),
          /Sandbox<\/span>|Simulate|Report KYC/,
          `${path}: no sandbox tool`,
        )
      }
      const csrf = csrfOf((await agent.get(`/console/cards/${card.id}`)).body)
      for (const [path, fields] of [
        [`/console/cards/${card.id}/issue`, {}],
        [
          `/console/cards/${card.id}/authorizations`,
          { amount: '1.00', currency: 'USD', merchant_name: 'X' },
        ],
        [`/console/cardholders/${chd.id}/kyc`, { status: 'approved', provider: 'X' }],
      ] as const) {
        const res = await agent.post(path, {
          _csrf: csrf,
          idempotency_key: `prod-${path}`,
          ...fields,
        })
        assert.equal(res.statusCode, 404, path)
      }
      assert.equal(
        (await api('GET', `/v1/cards/${card.id}`, undefined, prodToken)).status,
        'pending',
      )
      assert.equal(
        (await api('GET', `/v1/authorizations?card_id=${card.id}`, undefined, prodToken)).data
          .length,
        0,
      )
    } finally {
      const page = await agent.get('/console')
      await agent.post('/console/environment', {
        _csrf: csrfOf(page.body),
        environment: 'sandbox',
        return_to: '/console',
      })
    }
  })
})
