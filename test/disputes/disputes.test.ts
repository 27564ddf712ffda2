import { after, before, beforeEach, test } from 'node:test'
import assert from 'node:assert/strict'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import {
  cardBody,
  eventsFor,
  expectError,
  issuedCard,
  makeAccount,
  makeCardholder,
  runJobs,
} from '../cards/support.js'

let t: TestApp
let tenant: TestClient
let token: string
const MERCHANT = { name: 'Corner Books', mcc: '5942', city: 'Springfield', country: 'USA' }

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
})
beforeEach(async () => {
  token = await tenant.token()
})
after(async () => {
  await t.close()
})

async function ok(
  res: Promise<{ statusCode: number; body: string; json(): any }>,
  status = 200,
): Promise<any> {
  const r = await res
  assert.equal(r.statusCode, status, r.body)
  return r.json()
}

/** An active card on a funded account (sim_full credits the account; sim_basic is funded by a merchant refund). */
async function fundedCard(
  program: 'full' | 'basic' = 'full',
  funds = 10_000,
): Promise<{ card: any; account: any }> {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs[program].id, holder.id)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id))
  if (program === 'full')
    await ok(t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: funds }))
  else
    await ok(
      t.api(token, 'POST', '/v1/simulate/refunds', {
        card_id: card.id,
        amount: funds,
        currency: 'USD',
        merchant: MERCHANT,
      }),
      201,
    )
  return { card, account }
}

/** A capture of `amount` on the card; settled unless asked otherwise. */
async function capture(cardId: string, amount: number, settle = true): Promise<any> {
  const auth = await ok(
    t.api(token, 'POST', '/v1/simulate/authorizations', {
      card_id: cardId,
      amount,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    201,
  )
  assert.equal(auth.approved, true, JSON.stringify(auth))
  const txn = await ok(
    t.api(token, 'POST', `/v1/simulate/authorizations/${auth.id}/capture`, {}),
    201,
  )
  return settle ? ok(t.api(token, 'POST', `/v1/simulate/transactions/${txn.id}/settle`)) : txn
}

const open = (body: Record<string, unknown>, tok = token) =>
  t.api(tok, 'POST', '/v1/disputes', body)
const resolve = (id: string, outcome: string) =>
  t.api(token, 'POST', `/v1/simulate/disputes/${id}/resolve`, { outcome })
const withdraw = (id: string) => t.api(token, 'POST', `/v1/disputes/${id}/withdraw`)
const account = (id: string) => ok(t.api(token, 'GET', `/v1/accounts/${id}`))

test('a won dispute goes submitted → under_review → won and credits the account through a dispute_credit ledger entry', async () => {
  const { card, account: acct } = await fundedCard()
  const txn = await capture(card.id, 3000)
  const dispute = await ok(
    open({
      transaction_id: txn.id,
      reason: 'not_received',
      amount: 1200,
      evidence: { explanation: 'never arrived' },
    }),
    201,
  )
  assert.match(dispute.id, /^dsp_[0-9A-Z]{26}$/)
  assert.equal(dispute.object, 'dispute')
  assert.equal(dispute.status, 'submitted')
  assert.equal(dispute.transaction_id, txn.id)
  assert.equal(dispute.card_id, card.id)
  assert.equal(dispute.account_id, acct.id)
  assert.equal(dispute.amount, 1200)
  assert.equal(dispute.currency, 'USD')
  assert.equal(dispute.reason, 'not_received')
  assert.deepEqual(dispute.evidence, { explanation: 'never arrived' })
  assert.equal(dispute.resolved_at, null)

  t.clock.advance(1000)
  await runJobs(t)
  assert.equal((await ok(t.api(token, 'GET', `/v1/disputes/${dispute.id}`))).status, 'under_review')

  const before = await account(acct.id)
  const won = await ok(resolve(dispute.id, 'won'))
  assert.equal(won.status, 'won')
  assert.ok(won.resolved_at)
  const after = await account(acct.id)
  assert.equal(after.ledger_balance, before.ledger_balance + 1200)
  assert.equal(after.available_balance, before.available_balance + 1200)
  const entries = await ok(t.api(token, 'GET', `/v1/accounts/${acct.id}/entries`))
  const credit = entries.data[0]
  assert.equal(credit.type, 'dispute_credit')
  assert.equal(credit.amount, 1200)
  assert.equal(credit.source_id, dispute.id)
  assert.equal(credit.ledger_balance_after, after.ledger_balance)
  assert.deepEqual(
    (await eventsFor(t, dispute.id)).map((e) => [e.type, e.object.status]),
    [
      ['dispute.created', 'submitted'],
      ['dispute.updated', 'under_review'],
      ['dispute.updated', 'won'],
    ],
  )
  expectError(await resolve(dispute.id, 'lost'), 422, 'dispute_invalid_state')
  expectError(await withdraw(dispute.id), 422, 'dispute_invalid_state')
})

test('a lost dispute moves nothing; resolving a submitted dispute passes through under_review', async () => {
  const { card, account: acct } = await fundedCard()
  const txn = await capture(card.id, 2000)
  const dispute = await ok(open({ transaction_id: txn.id, reason: 'fraudulent' }), 201)
  assert.equal(dispute.amount, 2000, 'amount defaults to the whole transaction')
  assert.equal(dispute.evidence, null)
  const before = await account(acct.id)
  const lost = await ok(resolve(dispute.id, 'lost'))
  assert.equal(lost.status, 'lost')
  assert.deepEqual(await account(acct.id), before)
  assert.deepEqual(
    (await eventsFor(t, dispute.id, 'dispute.updated')).map((e) => e.object.status),
    ['under_review', 'lost'],
  )
  expectError(await resolve(dispute.id, 'won'), 422, 'dispute_invalid_state')
  expectError(await resolve(dispute.id, 'draw'), 400, 'invalid_parameter', 'outcome')
})

test('an open dispute can be withdrawn from submitted or under_review; withdrawn is final', async () => {
  const { card } = await fundedCard()
  const txn = await capture(card.id, 1000)
  const first = await ok(
    open({ transaction_id: txn.id, reason: 'duplicate', evidence: 'charged twice' }),
    201,
  )
  assert.equal(first.evidence, 'charged twice')
  assert.equal((await ok(withdraw(first.id))).status, 'withdrawn')
  expectError(await withdraw(first.id), 422, 'dispute_invalid_state')
  expectError(await resolve(first.id, 'won'), 422, 'dispute_invalid_state')
  const second = await ok(open({ transaction_id: txn.id, reason: 'duplicate' }), 201)
  t.clock.advance(1000)
  await runJobs(t)
  const withdrawn = await ok(withdraw(second.id))
  assert.equal(withdrawn.status, 'withdrawn')
  assert.ok(withdrawn.resolved_at)
  assert.deepEqual(
    (await eventsFor(t, second.id)).map((e) => e.object.status),
    ['submitted', 'under_review', 'withdrawn'],
  )
})

test('only settled captures are disputed, one open dispute at a time, up to what is left of the transaction', async () => {
  const { card } = await fundedCard(undefined, 20_000)
  const pending = await capture(card.id, 1000, false)
  expectError(
    await open({ transaction_id: pending.id, reason: 'fraudulent' }),
    422,
    'transaction_not_refundable',
    'transaction_id',
  )
  const refund = await ok(
    t.api(token, 'POST', '/v1/simulate/refunds', {
      card_id: card.id,
      amount: 100,
      currency: 'USD',
      merchant: MERCHANT,
    }),
    201,
  )
  expectError(
    await open({ transaction_id: refund.id, reason: 'fraudulent' }),
    422,
    'transaction_not_refundable',
    'transaction_id',
  )
  expectError(
    await open({ transaction_id: 'txn_00000000000000000000000000', reason: 'fraudulent' }),
    404,
    'transaction_not_found',
    'transaction_id',
  )
  expectError(await open({ transaction_id: pending.id }), 400, 'missing_parameter', 'reason')
  expectError(
    await open({ transaction_id: pending.id, reason: 'x', extra: 1 }),
    400,
    'unknown_parameter',
    'extra',
  )

  const txn = await capture(card.id, 5000)
  await ok(t.api(token, 'POST', `/v1/transactions/${txn.id}/refund`, { amount: 1000 }), 201)
  expectError(
    await open({ transaction_id: txn.id, reason: 'not_as_described', amount: 4001 }),
    422,
    'refund_exceeds_original',
    'amount',
  )
  const first = await ok(
    open({ transaction_id: txn.id, reason: 'not_as_described', amount: 1500 }),
    201,
  )
  expectError(
    await open({ transaction_id: txn.id, reason: 'not_as_described', amount: 100 }),
    409,
    'dispute_already_open',
    'transaction_id',
  )
  await ok(resolve(first.id, 'won'))
  expectError(
    await open({ transaction_id: txn.id, reason: 'not_as_described', amount: 2501 }),
    422,
    'refund_exceeds_original',
    'amount',
  )
  const rest = await ok(open({ transaction_id: txn.id, reason: 'not_as_described' }), 201)
  assert.equal(rest.amount, 2500, 'default: amount − refunded − won back')
  await ok(resolve(rest.id, 'lost'))
  const again = await ok(open({ transaction_id: txn.id, reason: 'not_as_described' }), 201)
  assert.equal(again.amount, 2500, 'a lost dispute gave nothing back')
  await ok(resolve(again.id, 'won'))
  expectError(
    await open({ transaction_id: txn.id, reason: 'fraudulent' }),
    422,
    'transaction_not_refundable',
    'transaction_id',
  )
})

test('money a dispute claims or won back cannot be refunded again: no double credit', async () => {
  const { card, account: acct } = await fundedCard(undefined, 20_000)
  const txn = await capture(card.id, 4000)
  const dispute = await ok(
    open({ transaction_id: txn.id, reason: 'fraudulent', amount: 3000 }),
    201,
  )
  expectError(
    await t.api(token, 'POST', `/v1/transactions/${txn.id}/refund`, { amount: 1001 }),
    422,
    'refund_exceeds_original',
    'amount',
  )
  await ok(t.api(token, 'POST', `/v1/transactions/${txn.id}/refund`, { amount: 1000 }), 201)
  await ok(resolve(dispute.id, 'won'))
  expectError(
    await t.api(token, 'POST', `/v1/transactions/${txn.id}/refund`, { amount: 1 }),
    422,
    'transaction_not_refundable',
  )
  const after = await account(acct.id)
  assert.equal(
    after.ledger_balance,
    20_000,
    'the 4000 capture came back exactly once: 1000 refunded + 3000 won',
  )
})

test('two simultaneous disputes of one transaction: exactly one opens, the other is 409 dispute_already_open', async () => {
  const { card } = await fundedCard()
  const txn = await capture(card.id, 1000)
  const results = await Promise.all(
    [1, 2, 3].map(() => open({ transaction_id: txn.id, reason: 'fraudulent', amount: 100 })),
  )
  assert.deepEqual(
    results.map((r) => r.statusCode).sort(),
    [201, 409, 409],
    results.map((r) => r.body).join('\n'),
  )
})

test('lists filter by transaction, card and status; another organization gets dispute_not_found', async () => {
  const { card } = await fundedCard()
  const a = await capture(card.id, 1000)
  const b = await capture(card.id, 1000)
  const da = await ok(open({ transaction_id: a.id, reason: 'fraudulent' }), 201)
  const db = await ok(open({ transaction_id: b.id, reason: 'fraudulent' }), 201)
  await ok(withdraw(db.id))
  const list = await ok(t.api(token, 'GET', `/v1/disputes?card_id=${card.id}`))
  assert.equal(list.url, '/v1/disputes')
  assert.deepEqual(
    list.data.map((d: any) => d.id),
    [db.id, da.id],
  )
  assert.deepEqual(
    (await ok(t.api(token, 'GET', `/v1/disputes?transaction_id=${a.id}`))).data.map(
      (d: any) => d.id,
    ),
    [da.id],
  )
  assert.deepEqual(
    (await ok(t.api(token, 'GET', `/v1/disputes?card_id=${card.id}&status=withdrawn`))).data.map(
      (d: any) => d.id,
    ),
    [db.id],
  )
  expectError(
    await t.api(token, 'GET', '/v1/disputes?status=open'),
    400,
    'invalid_parameter',
    'status',
  )

  const stranger = await (await createTenant(t)).token()
  expectError(await t.api(stranger, 'GET', `/v1/disputes/${da.id}`), 404, 'dispute_not_found')
  expectError(
    await t.api(stranger, 'POST', `/v1/disputes/${da.id}/withdraw`),
    404,
    'dispute_not_found',
  )
  expectError(
    await t.api(stranger, 'POST', `/v1/simulate/disputes/${da.id}/resolve`, { outcome: 'won' }),
    404,
    'dispute_not_found',
  )
  expectError(
    await open({ transaction_id: a.id, reason: 'fraudulent' }, stranger),
    404,
    'transaction_not_found',
  )
  assert.deepEqual((await ok(t.api(stranger, 'GET', '/v1/disputes'))).data, [])
  expectError(
    await t.api(token, 'GET', '/v1/disputes/dsp_00000000000000000000000000'),
    404,
    'dispute_not_found',
  )
})

test('opening and resolving need transactions:write, reading transactions:read', async () => {
  const { card } = await fundedCard()
  const txn = await capture(card.id, 1000)
  const reader = await tenant.token('transactions:read')
  const writer = await tenant.token('transactions:write')
  expectError(
    await open({ transaction_id: txn.id, reason: 'fraudulent' }, reader),
    403,
    'insufficient_scope',
  )
  const dispute = await ok(open({ transaction_id: txn.id, reason: 'fraudulent' }, writer), 201)
  expectError(await t.api(writer, 'GET', `/v1/disputes/${dispute.id}`), 403, 'insufficient_scope')
  assert.equal((await ok(t.api(reader, 'GET', `/v1/disputes/${dispute.id}`))).id, dispute.id)
  expectError(
    await t.api(reader, 'POST', `/v1/simulate/disputes/${dispute.id}/resolve`, { outcome: 'won' }),
    403,
    'insufficient_scope',
  )
})

test('sim_basic has no dispute feed: the dispute opens, resolving it is 422 operation_unsupported', async () => {
  const { card } = await fundedCard('basic')
  const txn = await capture(card.id, 1000)
  const dispute = await ok(open({ transaction_id: txn.id, reason: 'fraudulent' }), 201)
  expectError(await resolve(dispute.id, 'won'), 422, 'operation_unsupported')
  assert.equal((await ok(t.api(token, 'GET', `/v1/disputes/${dispute.id}`))).status, 'submitted')
})

test('in production the dispute simulator answers the identical 404 of an unknown path', async () => {
  const live = await (await createTenant(t, { environment: 'production' })).token()
  const shape = (res: { statusCode: number; headers: Record<string, unknown>; json(): any }) => {
    const { request_id: _r, ...error } = res.json().error
    return { status: res.statusCode, type: res.headers['content-type'], error }
  }
  const reference = shape(
    await t.api(live, 'POST', '/v1/simulate/disputes/x/nothing', { outcome: 'won' }),
  )
  assert.equal(reference.status, 404)
  assert.deepEqual(
    shape(
      await t.api(live, 'POST', '/v1/simulate/disputes/dsp_00000000000000000000000000/resolve', {
        outcome: 'won',
      }),
    ),
    reference,
  )
})
