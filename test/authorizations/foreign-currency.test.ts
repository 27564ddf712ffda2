/**
 * Spending in any currency (docs/fx.md, "Authorizations"): an authorization in another currency than its account's
 * is converted at the processor's rate (pinned here) with the program's markup; amount and currency stay the
 * account's, merchant_amount and merchant_currency are what the merchant asked, and fx says how one became the other.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsFor, expectError } from '../helpers/api.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody, issuedCard, makeCardholder, runJobs } from '../cards/support.js'
import type { RequestCtx } from '../../src/http/context.js'
import { decideLocked, presentRequest } from '../../src/modules/authorizations/engine.js'
import { Authorization } from '../../src/modules/authorizations/schemas.js'
import { authorize, authorizeRaw, balances, entries, MERCHANT, post } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

/** A program of the tenant's organization (sim_full) holding `currencies`, with FX settings applied. */
async function program(currencies: string[], settings: Record<string, unknown> = {}) {
  const created = await t.operator('POST', '/operator/v1/programs', {
    organization_id: tenant.organizationId,
    environment: tenant.environment,
    name: `FX ${currencies.join('/')}`,
    processor: 'sim_full',
    currencies,
    ...settings,
  })
  return created
}

/** An account in `currency` on `programId` credited with `balance`, and an active card on it. */
async function funded(
  programId: string,
  currency: string,
  balance: number,
  cardOverrides: Record<string, unknown> = {},
) {
  const holder = await makeCardholder(t, token)
  const res = await t.api(token, 'POST', '/v1/accounts', {
    program_id: programId,
    cardholder_id: holder.id,
    currency,
  })
  assert.equal(res.statusCode, 201, res.body)
  await runJobs(t)
  const account = res.json()
  await post(t, token, `/v1/accounts/${account.id}/credit`, { amount: balance })
  const card = await issuedCard(t, token, cardBody(holder.id, account.id, cardOverrides))
  return { account, card }
}

async function pin(base: string, quote: string, rate: string) {
  const res = await t.api(token, 'PUT', `/v1/simulate/fx_rates/${base}/${quote}`, { rate })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

test('a EUR spend on a USD account converts at the pinned rate with the program markup: held, fee and balance exact', async () => {
  const prog = await program(['USD'], { fx_markup_bps: 200 })
  const f = await funded(prog.id, 'USD', 50_000)
  const pinned = await pin('EUR', 'USD', '1.0825')
  const auth = await authorize(t, token, f.card.id, 10_000, { currency: 'eur' })
  assert.equal(auth.status, 'pending', JSON.stringify(auth))
  // 100.00 EUR × 1.0825 = 108.25 USD; × 1.02 = 110.415 → 110.42 (half away from zero); fee 110.42 − 108.25
  assert.equal(auth.amount, 11_042)
  assert.equal(auth.held_amount, 11_042)
  assert.equal(auth.currency, 'USD')
  assert.equal(auth.merchant_amount, 10_000)
  assert.equal(auth.merchant_currency, 'EUR')
  assert.deepEqual(auth.fx, {
    rate: '1.0825',
    markup_bps: 200,
    fee_amount: 217,
    source: 'sandbox',
    rate_at: pinned.rate_at,
  })
  assert.equal(auth.request_history[0].amount, 10_000)
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 50_000,
    held: 11_042,
    available: 50_000 - 11_042,
  })
  assert.deepEqual(await entries(t, token, f.account.id), [['hold', -11_042]])
  // The event and a later read carry the same fields.
  const [created] = await eventsFor(t, auth.id, 'authorization.created')
  assert.deepEqual(created.object, auth)
  const read = await t.api(token, 'GET', `/v1/authorizations/${auth.id}`)
  assert.deepEqual(read.json(), auth)
})

test('an increment and a partial reversal are in the merchant currency, converted at the recorded rate and markup', async () => {
  const prog = await program(['USD'], { fx_markup_bps: 200 })
  const f = await funded(prog.id, 'USD', 50_000)
  await pin('EUR', 'USD', '1.0825')
  const auth = await authorize(t, token, f.card.id, 10_000, { currency: 'EUR' })
  // A new pin does not move an authorization already made.
  await pin('EUR', 'USD', '2')
  const url = `/v1/simulate/authorizations/${auth.id}`
  const raised = await post(t, token, `${url}/increment`, { amount: 1000 })
  // 10.00 EUR × 1.0825 × 1.02 = 11.0415 → 11.04 USD, of which 0.21 markup (10.83 without)
  assert.equal(raised.amount, 11_042 + 1104)
  assert.equal(raised.held_amount, 11_042 + 1104)
  assert.equal(raised.merchant_amount, 11_000)
  assert.equal(raised.fx.fee_amount, 217 + 21)
  assert.equal(raised.fx.rate, '1.0825')
  assert.equal(raised.request_history[1].amount, 1000)
  const reversed = await post(t, token, `${url}/reverse`, { amount: 500 })
  // 5.00 EUR → 5.52075 → 5.52 USD released
  assert.equal(reversed.held_amount, 12_146 - 552)
  assert.equal(reversed.reversed_amount, 552)
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 50_000,
    held: 12_146 - 552,
    available: 50_000 - 12_146 + 552,
  })
  // More than is held, once converted, is refused.
  expectError(
    await t.api(token, 'POST', `${url}/reverse`, { amount: 11_000 }),
    400,
    'invalid_parameter',
    'amount',
  )
})

test('JPY into a BHD account: zero-decimal into three-decimal minor units', async () => {
  const prog = await program(['BHD'], { fx_markup_bps: 150 })
  const f = await funded(prog.id, 'BHD', 100_000)
  await pin('JPY', 'BHD', '0.00251')
  const auth = await authorize(t, token, f.card.id, 12_345, { currency: 'JPY' })
  // 12 345 JPY × 0.00251 = 30.98595 BHD → 30.986 (30 986 fils); × 1.015 = 31.45073925 → 31.451
  assert.equal(auth.status, 'pending', JSON.stringify(auth))
  assert.equal(auth.amount, 31_451)
  assert.equal(auth.currency, 'BHD')
  assert.equal(auth.merchant_amount, 12_345)
  assert.equal(auth.merchant_currency, 'JPY')
  assert.equal(auth.fx.fee_amount, 31_451 - 30_986)
  assert.equal(auth.fx.markup_bps, 150)
  assert.equal((await balances(t, token, f.account.id)).available, 100_000 - 31_451)
})

test('a program that blocks foreign spend declines currency_mismatch; an unknown currency is 400 naming currency', async () => {
  const prog = await program(['USD'], { foreign_spend: 'blocked' })
  const f = await funded(prog.id, 'USD', 10_000)
  const declined = await authorize(t, token, f.card.id, 100, { currency: 'EUR' })
  assert.equal(declined.status, 'declined')
  assert.equal(declined.decline_reason, 'currency_mismatch')
  assert.equal(declined.fx, null)
  // Allowed again, the same spend converts (at the table's rate: nothing pinned for GBP).
  await t.operator('PATCH', `/operator/v1/programs/${prog.id}`, { foreign_spend: 'allowed' })
  const approved = await authorize(t, token, f.card.id, 100, { currency: 'GBP' })
  assert.equal(approved.status, 'pending', JSON.stringify(approved))
  assert.equal(approved.currency, 'USD')
  assert.equal(approved.merchant_currency, 'GBP')
  assert.equal(approved.fx.source, 'sandbox')
  assert.ok(approved.amount > 100, JSON.stringify(approved))
  for (const currency of ['XYZ', 'xts']) {
    expectError(
      await authorizeRaw(t, token, f.card.id, 100, { currency }),
      400,
      'invalid_parameter',
      'currency',
    )
  }
  assert.deepEqual(await entries(t, token, f.account.id), [['hold', -approved.amount]])
})

test("a same-currency spend answers merchant_amount = amount, merchant_currency = currency, fx null, and the object's keys are the schema's", async () => {
  const prog = await program(['USD'], { fx_markup_bps: 300 })
  const f = await funded(prog.id, 'USD', 10_000)
  const auth = await authorize(t, token, f.card.id, 2500, { currency: 'usd' })
  assert.equal(auth.amount, 2500)
  assert.equal(auth.merchant_amount, 2500)
  assert.equal(auth.currency, 'USD')
  assert.equal(auth.merchant_currency, 'USD')
  assert.equal(auth.fx, null)
  assert.deepEqual(Object.keys(auth).sort(), Object.keys(Authorization.properties).sort())
  const raised = await post(t, token, `/v1/simulate/authorizations/${auth.id}/increment`, {
    amount: 500,
  })
  assert.equal(raised.amount, 3000)
  assert.equal(raised.merchant_amount, 3000)
  assert.equal(raised.fx, null)
})

test('spending limits judge the converted amount', async () => {
  const prog = await program(['USD'])
  const f = await funded(prog.id, 'USD', 100_000, {
    spending_controls: { spending_limits: [{ amount: 10_000, interval: 'per_authorization' }] },
  })
  await pin('EUR', 'USD', '1.0825')
  // 95.00 EUR is 102.84 USD: over the 100.00 limit, although 9 500 < 10 000.
  const over = await authorize(t, token, f.card.id, 9500, { currency: 'EUR' })
  assert.equal(over.decline_reason, 'spending_limit', JSON.stringify(over))
  assert.equal(over.amount, 10_284)
  const under = await authorize(t, token, f.card.id, 9000, { currency: 'EUR' })
  assert.equal(under.status, 'pending', JSON.stringify(under))
  assert.equal(under.amount, 9743)
  assert.equal(under.fx.fee_amount, 0)
})

test('a converted amount beyond the limit is refused with 400 naming amount, and nothing is held', async () => {
  const prog = await program(['USD'])
  const f = await funded(prog.id, 'USD', 10_000)
  await pin('EUR', 'USD', '1.0825')
  expectError(
    await authorizeRaw(t, token, f.card.id, 1_000_000_000_000, { currency: 'EUR' }),
    400,
    'invalid_parameter',
    'amount',
  )
  // An increment that would take the total beyond it converts alone and is refused the same way.
  const auth = await authorize(t, token, f.card.id, 100, { currency: 'EUR' })
  await pin('EUR', 'USD', '1.0825')
  expectError(
    await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/increment`, {
      amount: 1_000_000_000_000,
    }),
    400,
    'invalid_parameter',
    'amount',
  )
  assert.deepEqual(await entries(t, token, f.account.id), [['hold', -auth.amount]])
})

test('foreign and same-currency spends decided in one batch each convert on their own terms', async () => {
  const prog = await program(['USD'], { fx_markup_bps: 100 })
  const f = await funded(prog.id, 'USD', 1_000_000)
  await pin('EUR', 'USD', '1.1')
  await pin('JPY', 'USD', '0.0067')
  const asked: [number, string][] = [
    [1000, 'USD'],
    [1000, 'EUR'],
    [15_000, 'JPY'],
    [2000, 'EUR'],
    [3000, 'USD'],
  ]
  const auths = await Promise.all(
    asked.map(([amount, currency]) => authorize(t, token, f.card.id, amount, { currency })),
  )
  // EUR: 10.00 × 1.1 × 1.01 = 11.11; 20.00 → 22.22. JPY: 15 000 × 0.0067 = 100.50 USD, × 1.01 = 101.505 → 101.51
  assert.deepEqual(
    auths.map((a) => [a.status, a.amount, a.currency, a.merchant_amount, a.fx?.fee_amount ?? null]),
    [
      ['pending', 1000, 'USD', 1000, null],
      ['pending', 1111, 'USD', 1000, 11],
      ['pending', 10_151, 'USD', 15_000, 101],
      ['pending', 2222, 'USD', 2000, 22],
      ['pending', 3000, 'USD', 3000, null],
    ],
  )
  assert.equal((await balances(t, token, f.account.id)).held, 1000 + 1111 + 10_151 + 2222 + 3000)
})

// On the embedded database (one connection) a rate asked inside the transaction would wait on itself: the timeout
// turns that hang into a failure.
test("the locked path (a contended account's fallback) asks the rate before its transaction and converts", {
  timeout: 60_000,
}, async () => {
  const prog = await program(['USD'], { fx_markup_bps: 200 })
  const f = await funded(prog.id, 'USD', 50_000)
  await pin('EUR', 'USD', '1.0825')
  const ctx: RequestCtx = {
    requestId: 'req_test',
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    clientId: tenant.clientId,
    scopes: new Set(['transactions:write']),
  }
  const body = { card_id: f.card.id, amount: 10_000, currency: 'EUR', merchant: MERCHANT }
  const presented = await presentRequest(t.deps, ctx, body)
  const view = await decideLocked(t.deps, presented)
  assert.equal(view.status, 'pending', JSON.stringify(view))
  assert.equal(view.amount, 11_042)
  assert.equal(view.fx?.fee_amount, 217)
  assert.equal((await balances(t, token, f.account.id)).held, 11_042)
})
