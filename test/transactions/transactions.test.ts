import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import { eventsFor, expectError } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { cardBody } from '../cards/support.js'
import {
  MERCHANT,
  balances,
  entries,
  expectApproved,
  fundedCard,
  post,
  runJobs,
} from '../authorizations/support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

/** A capture of `amount` on a fresh card funded with `balance`. */
async function captured(balance: number, amount: number): Promise<{ f: any; txn: any }> {
  const f = await fundedCard(t, tenant, token, balance)
  const auth = await expectApproved(t, token, f.card.id, amount)
  return { f, txn: await post(t, token, `/v1/simulate/authorizations/${auth.id}/capture`, {}, 201) }
}

const refund = (id: string, body?: unknown) =>
  t.api(token, 'POST', `/v1/transactions/${id}/refund`, body)
const settle = (id: string) => post(t, token, `/v1/simulate/transactions/${id}/settle`)
const getTxn = async (id: string) => (await t.api(token, 'GET', `/v1/transactions/${id}`)).json()

test('a pending capture is not refundable; settled, it refunds in parts until fully refunded, never beyond', async () => {
  const { f, txn } = await captured(5000, 1000)
  expectError(await refund(txn.id, { amount: 100 }), 422, 'transaction_not_refundable')
  expectError(
    await t.api(token, 'POST', `/v1/simulate/transactions/${txn.id}/settle`, { at: 'now' }),
    400,
    'unknown_parameter',
    'at',
  )
  const settled = await settle(txn.id)
  assert.equal(settled.status, 'settled')
  assert.ok(settled.settled_at)
  assert.deepEqual(await settle(txn.id), settled, 'settling again answers it unchanged')

  const res = await refund(txn.id, { amount: 300, reason: 'requested_by_customer' })
  assert.equal(res.statusCode, 201, res.body)
  const r1 = res.json()
  assert.deepEqual(
    [
      r1.type,
      r1.status,
      r1.amount,
      r1.original_transaction_id,
      r1.reason,
      r1.card_id,
      r1.account_id,
      r1.authorization_id,
    ],
    [
      'refund',
      'settled',
      300,
      txn.id,
      'requested_by_customer',
      f.card.id,
      f.account.id,
      txn.authorization_id,
    ],
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 4300,
    held: 0,
    available: 4300,
  })
  let original = await getTxn(txn.id)
  assert.deepEqual([original.status, original.refunded_amount], ['settled', 300])

  expectError(await refund(txn.id, { amount: 701 }), 422, 'refund_exceeds_original', 'amount')
  const rest = await refund(txn.id, {})
  assert.equal(rest.statusCode, 201, rest.body)
  assert.equal(rest.json().amount, 700)
  original = await getTxn(txn.id)
  assert.deepEqual([original.status, original.refunded_amount], ['refunded', 1000])
  expectError(await refund(txn.id, { amount: 1 }), 422, 'transaction_not_refundable')
  expectError(await refund(r1.id, { amount: 1 }), 422, 'transaction_not_refundable')
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 5000,
    held: 0,
    available: 5000,
  })
  assert.deepEqual((await entries(t, token, f.account.id)).slice(-2), [
    ['refund', 300],
    ['refund', 700],
  ])
  assert.deepEqual(
    (await eventsFor(t, txn.id)).map((e) => [e.type, e.object.status, e.object.refunded_amount]),
    [
      ['transaction.created', 'pending', 0],
      ['transaction.updated', 'settled', 0],
      ['transaction.updated', 'settled', 300],
      ['transaction.updated', 'refunded', 1000],
    ],
  )
  assert.deepEqual(
    (await eventsFor(t, r1.id)).map((e) => e.type),
    ['transaction.created'],
  )
})

test('concurrent refunds of one capture never exceed it', async () => {
  const { f, txn } = await captured(5000, 1000)
  await settle(txn.id)
  const results = await Promise.all(
    Array.from({ length: 8 }, () => refund(txn.id, { amount: 200 })),
  )
  assert.equal(results.filter((r) => r.statusCode === 201).length, 5)
  for (const r of results.filter((x) => x.statusCode !== 201)) {
    assert.ok(
      ['refund_exceeds_original', 'transaction_not_refundable'].includes(r.json().error.code),
      r.body,
    )
  }
  assert.equal((await getTxn(txn.id)).status, 'refunded')
  assert.equal((await balances(t, token, f.account.id)).ledger, 5000)
})

test('the settlement job settles captures a day after they were made', async () => {
  const { txn } = await captured(5000, 400)
  await ensureSchedules(t.deps, t.jobs)
  await runJobs(t)
  assert.equal((await getTxn(txn.id)).status, 'pending')
  t.clock.advance(24 * 3600 * 1000 + 61_000)
  token = await tenant.token()
  await runJobs(t)
  const settled = await getTxn(txn.id)
  assert.equal(settled.status, 'settled')
  assert.ok(
    Math.abs(Date.parse(settled.settled_at) - t.clock.now().getTime()) < 10_000,
    "settled at the moved clock's time",
  )
})

test("a merchant-initiated refund credits the card's account, also when blocked, as a settled refund transaction", async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const res = await t.api(token, 'POST', '/v1/simulate/refunds', {
    card_id: f.card.id,
    amount: 250,
    currency: 'usd',
    merchant: MERCHANT,
  })
  assert.equal(res.statusCode, 201, res.body)
  const r = res.json()
  assert.deepEqual(
    [
      r.type,
      r.status,
      r.amount,
      r.currency,
      r.authorization_id,
      r.original_transaction_id,
      r.card_id,
    ],
    ['refund', 'settled', 250, 'USD', null, null, f.card.id],
  )
  assert.deepEqual(r.merchant, MERCHANT)
  await post(t, token, `/v1/accounts/${f.account.id}/block`)
  await post(
    t,
    token,
    '/v1/simulate/refunds',
    { card_id: f.card.id, amount: 50, currency: 'USD', merchant: MERCHANT },
    201,
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 1300,
    held: 0,
    available: 1300,
  })
  assert.deepEqual(await entries(t, token, f.account.id), [
    ['refund', 250],
    ['refund', 50],
  ])
  // Another currency converts at the processor's rate (the sandbox table: 1 EUR = 1.08695652174 USD), blocked or not;
  // test/transactions/foreign-currency.test.ts has the rest (pinned rates, markup, a program that blocks foreign spend).
  const euros = await post(
    t,
    token,
    '/v1/simulate/refunds',
    { card_id: f.card.id, amount: 50, currency: 'EUR', merchant: MERCHANT },
    201,
  )
  assert.deepEqual(
    [euros.amount, euros.currency, euros.merchant_amount, euros.merchant_currency, euros.fx.rate],
    [54, 'USD', 50, 'EUR', '1.08695652174'],
  )
  expectError(
    await t.api(token, 'POST', '/v1/simulate/refunds', {
      card_id: 'card_nope',
      amount: 50,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    404,
    'card_not_found',
    'card_id',
  )
  const pending = await post(t, token, '/v1/cards', cardBody(f.holder.id, f.account.id), 201)
  expectError(
    await t.api(token, 'POST', '/v1/simulate/refunds', {
      card_id: pending.id,
      amount: 50,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    422,
    'card_not_provisioned',
    'card_id',
  )
})

test('transaction lists filter by card, account, type and status; reads need transactions:read, refunds transactions:write', async () => {
  const a = await captured(5000, 100)
  const b = await captured(5000, 200)
  await settle(b.txn.id)
  const r = await post(
    t,
    token,
    '/v1/simulate/refunds',
    { card_id: a.f.card.id, amount: 5, currency: 'USD', merchant: MERCHANT },
    201,
  )
  const ids = async (q: string) => {
    const res = await t.api(token, 'GET', `/v1/transactions?${q}`)
    assert.equal(res.statusCode, 200, res.body)
    return res.json().data.map((x: any) => x.id)
  }
  assert.deepEqual(await ids(`card_id=${a.f.card.id}`), [r.id, a.txn.id])
  assert.deepEqual(await ids(`account_id=${b.f.account.id}`), [b.txn.id])
  assert.deepEqual(await ids(`card_id=${a.f.card.id}&type=capture`), [a.txn.id])
  assert.deepEqual(await ids(`card_id=${a.f.card.id}&type=refund`), [r.id])
  assert.deepEqual(await ids(`account_id=${b.f.account.id}&status=settled`), [b.txn.id])
  assert.deepEqual(await ids(`account_id=${b.f.account.id}&status=pending`), [])
  assert.deepEqual(await ids(`authorization_id=${a.txn.authorization_id}`), [a.txn.id])
  expectError(
    await t.api(token, 'GET', '/v1/transactions?type=purchase'),
    400,
    'invalid_parameter',
    'type',
  )
  expectError(
    await t.api(token, 'GET', '/v1/transactions/txn_00000000000000000000000000'),
    404,
    'transaction_not_found',
  )
  expectError(await refund('txn_00000000000000000000000000', {}), 404, 'transaction_not_found')
  expectError(await refund(b.txn.id, { amount: 1, note: 'x' }), 400, 'unknown_parameter', 'note')
  const readOnly = await tenant.token('transactions:read')
  assert.equal((await t.api(readOnly, 'GET', `/v1/transactions/${a.txn.id}`)).statusCode, 200)
  expectError(
    await t.api(readOnly, 'POST', `/v1/transactions/${b.txn.id}/refund`, {}),
    403,
    'insufficient_scope',
  )
  expectError(
    await t.api(await tenant.token('cards:read'), 'GET', '/v1/transactions'),
    403,
    'insufficient_scope',
  )
  const stranger = await createTenant(t)
  expectError(
    await t.api(await stranger.token(), 'GET', `/v1/transactions/${a.txn.id}`),
    404,
    'transaction_not_found',
  )
  expectError(
    await t.api(await stranger.token(), 'POST', `/v1/transactions/${b.txn.id}/refund`, {}),
    404,
    'transaction_not_found',
  )
})

test('in production every authorization and transaction simulator route is the same 404 not_found as an unknown path', async () => {
  const live = await createTenant(t, { environment: 'production' })
  const liveToken = await live.token()
  const unknown = await t.api(liveToken, 'POST', '/v1/simulate/nothing_here', {})
  assert.equal(unknown.statusCode, 404)
  const shape = (body: any) => ({ ...body.error, request_id: undefined })
  const id = 'auth_00000000000000000000000000'
  const routes = [
    '/v1/simulate/authorizations',
    `/v1/simulate/authorizations/${id}/increment`,
    `/v1/simulate/authorizations/${id}/reverse`,
    `/v1/simulate/authorizations/${id}/capture`,
    `/v1/simulate/authorizations/${id}/expire`,
    '/v1/simulate/transactions/txn_00000000000000000000000000/settle',
    '/v1/simulate/refunds',
  ]
  for (const url of routes) {
    const res = await t.api(liveToken, 'POST', url, { amount: 1 })
    assert.equal(res.statusCode, 404, url)
    assert.equal(res.json().error.code, 'not_found', url)
    assert.deepEqual(
      shape(res.json()),
      { ...shape(unknown.json()), message: res.json().error.message },
      url,
    )
    assert.equal(res.json().error.message, unknown.json().error.message, url)
  }
  assert.equal((await t.api(liveToken, 'GET', '/v1/authorizations')).statusCode, 200)
  assert.equal((await t.api(liveToken, 'GET', '/v1/transactions')).statusCode, 200)
})
