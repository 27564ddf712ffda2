/**
 * Captures and refunds in any currency (docs/fx.md, "Captures", "Refunds", "Transactions", "fx_fee"): a capture named
 * in the merchant's currency converts at the rate of its own time (a moved rate is a partial or an over-capture), a
 * refund converts at the rate of its own time and is judged in the merchant's currency, a merchant refund in another
 * currency converts instead of declining, and a program's `fx_fee: separate` debits (and gives back) the markup as its
 * own ledger entry. A transaction in its account's currency is what it was, with the new fields beside.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { eventsFor, expectError } from '../helpers/api.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { ledgerEntries } from '../accounts/support.js'
import { cardBody, issuedCard, makeCardholder, runJobs } from '../cards/support.js'
import {
  authorize,
  balances,
  entries,
  fundedCard,
  MERCHANT,
  post,
} from '../authorizations/support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

/** A sim_full program of the tenant's organization holding `currencies`, with FX settings applied. */
async function program(currencies: string[], settings: Record<string, unknown> = {}) {
  return t.operator('POST', '/operator/v1/programs', {
    organization_id: tenant.organizationId,
    environment: tenant.environment,
    name: `FX ${currencies.join('/')} ${JSON.stringify(settings)}`,
    processor: 'sim_full',
    currencies,
    ...settings,
  })
}

/** An account in `currency` on `programId` credited with `balance`, and an active card on it. */
async function funded(programId: string, currency: string, balance: number) {
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
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  return { account, card }
}

async function pin(base: string, quote: string, rate: string) {
  const res = await t.api(token, 'PUT', `/v1/simulate/fx_rates/${base}/${quote}`, { rate })
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

const capture = (authId: string, body: Record<string, unknown> = {}) =>
  post(t, token, `/v1/simulate/authorizations/${authId}/capture`, body, 201)
const getAuth = async (id: string) => (await t.api(token, 'GET', `/v1/authorizations/${id}`)).json()
const getTxn = async (id: string) => (await t.api(token, 'GET', `/v1/transactions/${id}`)).json()
const settle = (id: string) => post(t, token, `/v1/simulate/transactions/${id}/settle`)
const refund = (id: string, body: Record<string, unknown> = {}) =>
  t.api(token, 'POST', `/v1/transactions/${id}/refund`, body)

/** A USD account on a program with `settings`, EUR → USD pinned at 1.0825, and 100.00 EUR authorized on its card. */
async function euroSpend(settings: Record<string, unknown>, balance = 50_000) {
  const prog = await program(['USD'], settings)
  const f = await funded(prog.id, 'USD', balance)
  const pinned = await pin('EUR', 'USD', '1.0825')
  const auth = await authorize(t, token, f.card.id, 10_000, { currency: 'EUR' })
  assert.equal(auth.status, 'pending', JSON.stringify(auth))
  return { prog, ...f, auth, pinned }
}

test('a capture in the merchant currency re-rates: the rate moved up, so it takes the difference from the balance', async () => {
  const { account, auth } = await euroSpend({ fx_markup_bps: 200 })
  // 100.00 EUR × 1.0825 × 1.02 = 110.42 held
  assert.equal(auth.held_amount, 11_042)
  const moved = await pin('EUR', 'USD', '1.1')
  const txn = await capture(auth.id, { currency: 'eur' })
  // 100.00 EUR × 1.1 = 110.00, × 1.02 = 112.20 USD, of which 2.20 markup
  assert.deepEqual(
    [txn.type, txn.status, txn.amount, txn.currency, txn.merchant_amount, txn.merchant_currency],
    ['capture', 'pending', 11_220, 'USD', 10_000, 'EUR'],
  )
  assert.equal(txn.merchant_refunded_amount, 0)
  assert.deepEqual(txn.fx, {
    rate: '1.1',
    markup_bps: 200,
    fee_amount: 220,
    source: 'sandbox',
    rate_at: moved.rate_at,
  })
  // The hold covers 110.42; the 1.78 more comes from the available balance, as an over-capture.
  assert.deepEqual(await entries(t, token, account.id), [
    ['hold', -11_042],
    ['capture', -11_220],
  ])
  assert.deepEqual(await balances(t, token, account.id), {
    ledger: 50_000 - 11_220,
    held: 0,
    available: 50_000 - 11_220,
  })
  const closed = await getAuth(auth.id)
  assert.deepEqual(
    [closed.status, closed.held_amount, closed.captured_amount, closed.merchant_amount],
    ['closed', 0, 11_220, 10_000],
  )
  const [created] = await eventsFor(t, txn.id, 'transaction.created')
  assert.deepEqual(created.object, txn)
  assert.deepEqual(await getTxn(txn.id), txn)
  // Settlement keeps the capture's amount and rate, whatever the rate does meanwhile.
  await pin('EUR', 'USD', '1.3')
  const settled = await settle(txn.id)
  assert.deepEqual([settled.amount, settled.fx], [txn.amount, txn.fx])
})

test('the rate moved down: a capture left open stands for what its merchant amount held, the rest is captured by default', async () => {
  const { account, auth } = await euroSpend({ fx_markup_bps: 200 })
  await pin('EUR', 'USD', '1')
  const first = await capture(auth.id, {
    amount: 4000,
    currency: 'EUR',
    close_authorization: false,
  })
  // 40.00 EUR × 1 × 1.02 = 40.80 USD debited; 40.00 EUR was held at 1.0825 × 1.02 = 44.17: the 3.37 between is released.
  assert.deepEqual([first.amount, first.merchant_amount, first.fx.fee_amount], [4080, 4000, 80])
  let open = await getAuth(auth.id)
  assert.deepEqual(
    [open.status, open.held_amount, open.captured_amount],
    ['pending', 11_042 - 4417, 4080],
  )
  // Without an amount: what is still held, in euros at the authorization's rate (60.00 EUR), converted at the rate now.
  const rest = await capture(auth.id, { currency: 'EUR' })
  assert.deepEqual([rest.amount, rest.merchant_amount, rest.fx.fee_amount], [6120, 6000, 120])
  open = await getAuth(auth.id)
  assert.deepEqual([open.status, open.held_amount, open.captured_amount], ['closed', 0, 10_200])
  assert.deepEqual(await entries(t, token, account.id), [
    ['hold', -11_042],
    ['capture', -4080],
    ['hold_release', 337],
    ['capture', -6120],
    ['hold_release', 505],
  ])
  assert.deepEqual(await balances(t, token, account.id), {
    ledger: 50_000 - 10_200,
    held: 0,
    available: 50_000 - 10_200,
  })
})

test("a capture in the account currency keeps the authorization's rate; its merchant amount and fee are its share", async () => {
  const { account, auth } = await euroSpend({ fx_markup_bps: 200 })
  await pin('EUR', 'USD', '2') // not asked: a capture in the account's currency is not re-rated
  const part = await capture(auth.id, { amount: 3000, close_authorization: false })
  // 30.00 of 110.42 USD stands for 27.17 of 100.00 EUR and 0.59 of the 2.17 markup.
  assert.deepEqual(
    [part.amount, part.currency, part.merchant_amount, part.merchant_currency],
    [3000, 'USD', 2717, 'EUR'],
  )
  assert.deepEqual(part.fx, { ...auth.fx, fee_amount: 59 })
  const rest = await capture(auth.id, { currency: 'USD' })
  assert.deepEqual([rest.amount, rest.merchant_amount, rest.fx.fee_amount], [8042, 7283, 158])
  assert.deepEqual(await entries(t, token, account.id), [
    ['hold', -11_042],
    ['capture', -3000],
    ['capture', -8042],
  ])
})

test('a capture names the merchant or the account currency; another, an unknown one or an overflow is 400 and moves nothing', async () => {
  const { account, auth } = await euroSpend({})
  for (const currency of ['GBP', 'XYZ']) {
    expectError(
      await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, { currency }),
      400,
      'invalid_parameter',
      'currency',
    )
  }
  await pin('EUR', 'USD', '100000000000')
  expectError(
    await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, {
      amount: 1_000_000,
      currency: 'EUR',
    }),
    400,
    'invalid_parameter',
    'amount',
  )
  assert.deepEqual(await entries(t, token, account.id), [['hold', -auth.amount]])
  assert.equal((await getAuth(auth.id)).status, 'pending')
})

test('a refund converts at its own rate and is judged in the merchant currency: refunding all of it credits more than was debited', async () => {
  const { prog, account, auth } = await euroSpend({ fx_markup_bps: 200 })
  const txn = await capture(auth.id, { currency: 'EUR' })
  assert.equal(txn.amount, 11_042)
  await settle(txn.id)
  await pin('EUR', 'USD', '1.2')
  const res = await refund(txn.id, { amount: 4000, reason: 'returned' })
  assert.equal(res.statusCode, 201, res.body)
  const first = res.json()
  // 40.00 EUR × 1.2 × 1.02 = 48.96 USD back, of which 0.96 markup
  assert.deepEqual(
    [first.type, first.amount, first.currency, first.merchant_amount, first.merchant_currency],
    ['refund', 4896, 'USD', 4000, 'EUR'],
  )
  assert.deepEqual(
    [first.fx.rate, first.fx.fee_amount, first.original_transaction_id],
    ['1.2', 96, txn.id],
  )
  let original = await getTxn(txn.id)
  assert.deepEqual(
    [original.status, original.refunded_amount, original.merchant_refunded_amount],
    ['settled', 4896, 4000],
  )
  expectError(await refund(txn.id, { amount: 6001 }), 422, 'refund_exceeds_original', 'amount')
  for (const currency of ['USD', 'XYZ']) {
    expectError(
      await refund(txn.id, { amount: 100, currency }),
      400,
      'invalid_parameter',
      'currency',
    )
  }
  // Blocking foreign spend stops new spends, not money coming back.
  await t.operator('PATCH', `/operator/v1/programs/${prog.id}`, { foreign_spend: 'blocked' })
  const all = await refund(txn.id, { currency: 'eur' })
  assert.equal(all.statusCode, 201, all.body)
  // The 60.00 EUR left: 60.00 × 1.2 × 1.02 = 73.44 USD
  assert.deepEqual([all.json().amount, all.json().merchant_amount], [7344, 6000])
  original = await getTxn(txn.id)
  assert.deepEqual(
    [original.status, original.refunded_amount, original.merchant_refunded_amount],
    ['refunded', 4896 + 7344, 10_000],
  )
  assert.ok(original.refunded_amount > original.amount, 'the rate moved up: more came back')
  expectError(await refund(txn.id, { amount: 1 }), 422, 'transaction_not_refundable')
  assert.deepEqual(await entries(t, token, account.id), [
    ['hold', -11_042],
    ['capture', -11_042],
    ['refund', 4896],
    ['refund', 7344],
  ])
  assert.equal((await balances(t, token, account.id)).ledger, 50_000 - 11_042 + 4896 + 7344)
  const updates = await eventsFor(t, txn.id, 'transaction.updated')
  assert.deepEqual(updates.at(-1)!.object, original)
  const [created] = await eventsFor(t, first.id, 'transaction.created')
  assert.deepEqual(created.object, first)
})

test('what a dispute claims of a foreign capture is its share of the merchant amount, rounded up, and is not refunded', async () => {
  const { auth } = await euroSpend({ fx_markup_bps: 200 })
  const txn = await capture(auth.id, { currency: 'EUR' })
  await settle(txn.id)
  // Disputes are in the account's currency: 55.21 of 110.42 USD is half of the 100.00 EUR.
  await post(
    t,
    token,
    '/v1/disputes',
    { transaction_id: txn.id, reason: 'not_received', amount: 5521 },
    201,
  )
  expectError(await refund(txn.id, { amount: 5001 }), 422, 'refund_exceeds_original', 'amount')
  const rest = await refund(txn.id, {})
  assert.equal(rest.statusCode, 201, rest.body)
  assert.deepEqual([rest.json().merchant_amount, rest.json().amount], [5000, 5521])
  expectError(await refund(txn.id, { amount: 1 }), 422, 'transaction_not_refundable')
})

test('a merchant refund in another currency converts at the rate now with the markup; blocked programs refuse it', async () => {
  const prog = await program(['USD'], { fx_markup_bps: 100 })
  const f = await funded(prog.id, 'USD', 1000)
  const pinned = await pin('GBP', 'USD', '1.25')
  const send = (cardId: string, amount: number, currency: string) =>
    t.api(token, 'POST', '/v1/simulate/refunds', {
      card_id: cardId,
      amount,
      currency,
      merchant: MERCHANT,
    })
  const res = await send(f.card.id, 2000, 'gbp')
  assert.equal(res.statusCode, 201, res.body)
  const r = res.json()
  // 20.00 GBP × 1.25 × 1.01 = 25.25 USD
  assert.deepEqual(
    [r.type, r.status, r.amount, r.currency, r.merchant_amount, r.merchant_currency],
    ['refund', 'settled', 2525, 'USD', 2000, 'GBP'],
  )
  assert.deepEqual(r.fx, {
    rate: '1.25',
    markup_bps: 100,
    fee_amount: 25,
    source: 'sandbox',
    rate_at: pinned.rate_at,
  })
  expectError(await send(f.card.id, 100, 'XYZ'), 400, 'invalid_parameter', 'currency')
  await pin('EUR', 'USD', '2')
  expectError(await send(f.card.id, 1_000_000_000_000, 'EUR'), 400, 'invalid_parameter', 'amount')
  assert.deepEqual(await entries(t, token, f.account.id), [['refund', 2525]])
  assert.equal((await balances(t, token, f.account.id)).ledger, 1000 + 2525)

  const blocked = await program(['USD'], { foreign_spend: 'blocked' })
  const b = await funded(blocked.id, 'USD', 1000)
  expectError(await send(b.card.id, 100, 'EUR'), 422, 'currency_mismatch', 'currency')
  const own = await send(b.card.id, 100, 'USD')
  assert.equal(own.statusCode, 201, own.body)
  assert.deepEqual([own.json().amount, own.json().fx], [100, null])
})

test('fx_fee separate: the markup is its own fx_fee entry beside the capture, and comes back as one with a refund', async () => {
  const { account, card, auth } = await euroSpend({ fx_markup_bps: 200, fx_fee: 'separate' })
  // The hold covers everything the spend will debit: the markup included.
  assert.deepEqual([auth.amount, auth.fx.fee_amount], [11_042, 217])
  const txn = await capture(auth.id, { currency: 'EUR' })
  // The transaction's amount is the conversion without the markup; the markup is in fx.fee_amount and its own entry.
  assert.deepEqual([txn.amount, txn.merchant_amount, txn.fx.fee_amount], [10_825, 10_000, 217])
  const all = await ledgerEntries(t, token, account.id)
  assert.deepEqual(
    all
      .filter((e) => e.type !== 'credit')
      .map((e) => [e.type, e.amount, e.source_id, e.held_balance_after, e.available_balance_after]),
    [
      ['hold', -11_042, auth.id, 11_042, 50_000 - 11_042],
      ['capture', -10_825, auth.id, 217, 50_000 - 11_042],
      ['fx_fee', -217, auth.id, 0, 50_000 - 11_042],
    ],
  )
  assert.equal((await getAuth(auth.id)).captured_amount, 11_042)

  await settle(txn.id)
  const back = await refund(txn.id, {})
  assert.equal(back.statusCode, 201, back.body)
  const r = back.json()
  assert.deepEqual([r.amount, r.merchant_amount, r.fx.fee_amount], [10_825, 10_000, 217])
  const original = await getTxn(txn.id)
  assert.deepEqual([original.status, original.refunded_amount], ['refunded', 10_825])

  // A capture named in the account's currency splits its share of the markup the same way.
  const second = await authorize(t, token, card.id, 10_000, { currency: 'EUR' })
  const plain = await capture(second.id)
  assert.deepEqual([plain.amount, plain.fx.fee_amount], [10_825, 217])
  // A merchant refund: 10.00 EUR is 10.83 USD without markup, 11.04 with.
  const mref = await post(
    t,
    token,
    '/v1/simulate/refunds',
    { card_id: card.id, amount: 1000, currency: 'EUR', merchant: MERCHANT },
    201,
  )
  assert.deepEqual([mref.amount, mref.fx.fee_amount], [1083, 21])
  assert.deepEqual((await entries(t, token, account.id)).slice(3), [
    ['refund', 10_825],
    ['fx_fee', 217],
    ['hold', -11_042],
    ['capture', -10_825],
    ['fx_fee', -217],
    ['refund', 1083],
    ['fx_fee', 21],
  ])
  const sources = (await ledgerEntries(t, token, account.id))
    .filter((e) => e.type === 'fx_fee')
    .map((e) => e.source_id)
  assert.deepEqual(sources, [auth.id, r.id, second.id, mref.id])
  assert.deepEqual(await balances(t, token, account.id), {
    ledger: 50_000 - 11_042 + 1104,
    held: 0,
    available: 50_000 - 11_042 + 1104,
  })
})

test('in the account currency nothing changes: every answer is what it was, with the new fields beside', async () => {
  // Even on a program with a markup and a separate fee: nothing is converted, so neither applies.
  const prog = await program(['USD'], { fx_markup_bps: 300, fx_fee: 'separate' })
  const f = await funded(prog.id, 'USD', 10_000)
  const OLD_KEYS = [
    'id',
    'object',
    'type',
    'status',
    'amount',
    'refunded_amount',
    'currency',
    'authorization_id',
    'original_transaction_id',
    'card_id',
    'account_id',
    'program_id',
    'merchant',
    'reason',
    'created_at',
    'updated_at',
    'settled_at',
  ]
  /** The answer's text without the new fields is exactly the old object's text, and the new fields mirror it. */
  const sameAsBefore = (body: string) => {
    const { merchant_amount, merchant_refunded_amount, merchant_currency, fx, ...old } =
      JSON.parse(body)
    assert.deepEqual(Object.keys(old), OLD_KEYS)
    assert.deepEqual(
      [merchant_amount, merchant_refunded_amount, merchant_currency, fx],
      [old.amount, old.refunded_amount, old.currency, null],
    )
    const added = `"merchant_amount":${old.amount},"merchant_refunded_amount":${old.refunded_amount},"merchant_currency":"${old.currency}","fx":null,`
    assert.equal(body.replace(added, ''), JSON.stringify(old))
    return old
  }
  const auth = await authorize(t, token, f.card.id, 2500)
  assert.deepEqual([auth.merchant_amount, auth.fx], [2500, null])
  const res = await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, {})
  assert.equal(res.statusCode, 201, res.body)
  const txn = sameAsBefore(res.body)
  assert.equal(txn.amount, 2500)
  expectError(
    await t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, {
      currency: 'EUR',
    }),
    400,
    'invalid_parameter',
    'currency',
  )
  const other = await authorize(t, token, f.card.id, 1000)
  const named = await t.api(token, 'POST', `/v1/simulate/authorizations/${other.id}/capture`, {
    amount: 600,
    currency: 'usd',
  })
  assert.equal(named.statusCode, 201, named.body)
  assert.equal(sameAsBefore(named.body).amount, 600)
  await settle(txn.id)
  const back = await refund(txn.id, { amount: 500, currency: 'USD' })
  assert.equal(back.statusCode, 201, back.body)
  sameAsBefore(back.body)
  sameAsBefore((await t.api(token, 'GET', `/v1/transactions/${txn.id}`)).body)
  const mref = await t.api(token, 'POST', '/v1/simulate/refunds', {
    card_id: f.card.id,
    amount: 250,
    currency: 'USD',
    merchant: MERCHANT,
  })
  assert.equal(mref.statusCode, 201, mref.body)
  sameAsBefore(mref.body)
  // No fx_fee entry: the markup and the fee setting apply only to a conversion.
  assert.deepEqual(await entries(t, token, f.account.id), [
    ['hold', -2500],
    ['capture', -2500],
    ['hold', -1000],
    ['capture', -600],
    ['hold_release', 400],
    ['refund', 500],
    ['refund', 250],
  ])
})

test('the transactions report ends with merchant_amount, merchant_currency, fx_rate and fx_fee', async () => {
  const from = new Date(t.clock.now().getTime() - 60_000).toISOString()
  const { auth } = await euroSpend({ fx_markup_bps: 200 })
  const foreign = await capture(auth.id, { currency: 'EUR' })
  const f = await fundedCard(t, tenant, token, 5000)
  const own = await capture((await authorize(t, token, f.card.id, 1250)).id)
  const to = new Date(t.clock.now().getTime() + 60_000).toISOString()
  const created = await post(t, token, '/v1/reports', { type: 'transactions', from, to }, 201)
  await runJobs(t)
  const file = await t.api(token, 'GET', `/v1/reports/${created.id}/download`)
  assert.equal(file.statusCode, 200, file.body)
  const [header, ...lines] = file.body.trimEnd().split('\n')
  assert.equal(
    header,
    'id,type,status,amount,refunded_amount,currency,card_id,account_id,authorization_id,original_transaction_id,' +
      'merchant_name,merchant_mcc,merchant_city,merchant_country,created_at,settled_at,' +
      'merchant_amount,merchant_currency,fx_rate,fx_fee',
  )
  const row = (id: string) => {
    const line = lines.find((l) => l.startsWith(`${id},`))
    assert.ok(line, `${id} is in the report`)
    const fields = line.split(',')
    return [fields[3], fields[5], ...fields.slice(-4)]
  }
  assert.deepEqual(row(foreign.id), ['11042', 'USD', '10000', 'EUR', '1.0825', '217'])
  assert.deepEqual(row(own.id), ['1250', 'USD', '1250', 'USD', '', ''])
})
