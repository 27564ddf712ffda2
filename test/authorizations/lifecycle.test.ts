import assert from 'node:assert/strict'
import { test } from 'node:test'
import { ensureSchedules } from '../../src/jobs/schedules.js'
import { eventsFor, expectError } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import {
  authorizeRaw,
  balances,
  entries,
  expectApproved,
  fundedCard,
  post,
  runJobs,
} from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

const sim = (id: string, op: string) => `/v1/simulate/authorizations/${id}/${op}`
const get = async (id: string) => (await t.api(token, 'GET', `/v1/authorizations/${id}`)).json()

test('hold arithmetic: authorize 3000, increment 1500, capture 2000, the remaining 2500 released; every step a ledger entry', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const auth = await expectApproved(t, token, f.card.id, 3000)
  const raised = await post(t, token, sim(auth.id, 'increment'), { amount: 1500 })
  assert.deepEqual([raised.status, raised.amount, raised.held_amount], ['pending', 4500, 4500])
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 10_000,
    held: 4500,
    available: 5500,
  })
  const txn = await post(t, token, sim(auth.id, 'capture'), { amount: 2000 }, 201)
  assert.match(txn.id, /^txn_/)
  assert.deepEqual(
    [
      txn.object,
      txn.type,
      txn.status,
      txn.amount,
      txn.refunded_amount,
      txn.authorization_id,
      txn.card_id,
      txn.account_id,
      txn.settled_at,
    ],
    ['transaction', 'capture', 'pending', 2000, 0, auth.id, f.card.id, f.account.id, null],
  )
  assert.deepEqual(txn.merchant, auth.merchant)
  const closed = await get(auth.id)
  assert.deepEqual(
    [
      closed.status,
      closed.amount,
      closed.held_amount,
      closed.captured_amount,
      closed.reversed_amount,
    ],
    ['closed', 4500, 0, 2000, 0],
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 8000,
    held: 0,
    available: 8000,
  })
  assert.deepEqual(await entries(t, token, f.account.id), [
    ['hold', -3000],
    ['hold', -1500],
    ['capture', -2000],
    ['hold_release', 2500],
  ])
  assert.deepEqual(
    (await eventsFor(t, auth.id)).map((e) => [e.type, e.object.status, e.object.held_amount]),
    [
      ['authorization.created', 'pending', 3000],
      ['authorization.updated', 'pending', 4500],
      ['authorization.updated', 'closed', 0],
    ],
  )
  assert.deepEqual(
    (await eventsFor(t, txn.id)).map((e) => e.type),
    ['transaction.created'],
  )
})

test('partial capture keeping the rest, then partial and full reversal: held shrinks step by step and the authorization closes', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const auth = await expectApproved(t, token, f.card.id, 3000)
  await post(t, token, sim(auth.id, 'capture'), { amount: 1000, close_authorization: false }, 201)
  let a = await get(auth.id)
  assert.deepEqual([a.status, a.held_amount, a.captured_amount], ['pending', 2000, 1000])
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 9000,
    held: 2000,
    available: 7000,
  })
  expectError(
    await t.api(token, 'POST', sim(auth.id, 'reverse'), { amount: 2001 }),
    400,
    'invalid_parameter',
    'amount',
  )
  a = await post(t, token, sim(auth.id, 'reverse'), { amount: 500 })
  assert.deepEqual([a.status, a.held_amount, a.reversed_amount], ['pending', 1500, 500])
  a = await post(t, token, sim(auth.id, 'reverse'))
  assert.deepEqual(
    [a.status, a.held_amount, a.reversed_amount, a.captured_amount],
    ['closed', 0, 2000, 1000],
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 9000,
    held: 0,
    available: 9000,
  })
  assert.deepEqual(await entries(t, token, f.account.id), [
    ['hold', -3000],
    ['capture', -1000],
    ['hold_release', 500],
    ['hold_release', 1500],
  ])
})

test('a full reversal without capture leaves the authorization reversed; later moves on it answer 400 invalid_parameter', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const auth = await expectApproved(t, token, f.card.id, 700)
  const reversed = await post(t, token, sim(auth.id, 'reverse'))
  assert.deepEqual(
    [reversed.status, reversed.held_amount, reversed.reversed_amount],
    ['reversed', 0, 700],
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 10_000,
    held: 0,
    available: 10_000,
  })
  for (const [op, body] of [
    ['reverse', {}],
    ['increment', { amount: 1 }],
    ['capture', {}],
    ['expire', undefined],
  ] as const) {
    expectError(
      await t.api(token, 'POST', sim(auth.id, op), body),
      422,
      'authorization_invalid_state',
    )
  }
  const declined = (await authorizeRaw(t, token, f.card.id, 1_000_000)).json()
  assert.equal(declined.status, 'declined')
  expectError(
    await t.api(token, 'POST', sim(declined.id, 'capture'), { amount: 10 }),
    422,
    'authorization_invalid_state',
  )
})

test('a declined increment changes nothing but the request history, with its reason', async () => {
  const f = await fundedCard(t, tenant, token, 1000, {
    spending_controls: { spending_limits: [{ amount: 900, interval: 'per_authorization' }] },
  })
  const auth = await expectApproved(t, token, f.card.id, 800)
  let a = await post(t, token, sim(auth.id, 'increment'), { amount: 150 })
  assert.deepEqual([a.status, a.amount, a.held_amount], ['pending', 800, 800])
  a = await post(t, token, sim(auth.id, 'increment'), { amount: 100 })
  assert.deepEqual([a.amount, a.held_amount], [900, 900])
  await post(t, token, `/v1/cards/${f.card.id}/freeze`)
  a = await post(t, token, sim(auth.id, 'increment'), { amount: 1 })
  assert.deepEqual(
    a.request_history.map((r: any) => [r.type, r.amount, r.approved, r.decline_reason]),
    [
      ['authorization', 800, true, null],
      ['increment', 150, false, 'spending_limit'],
      ['increment', 100, true, null],
      ['increment', 1, false, 'card_frozen'],
    ],
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 1000,
    held: 900,
    available: 100,
  })
})

test('an increment beyond the available balance declines insufficient_funds', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const auth = await expectApproved(t, token, f.card.id, 600)
  const a = await post(t, token, sim(auth.id, 'increment'), { amount: 401 })
  assert.deepEqual([a.amount, a.request_history[1].decline_reason], [600, 'insufficient_funds'])
})

test('over-capture takes the excess from the available balance, and answers 402 insufficient_funds beyond it', async () => {
  const f = await fundedCard(t, tenant, token, 1500)
  const auth = await expectApproved(t, token, f.card.id, 1000)
  expectError(
    await t.api(token, 'POST', sim(auth.id, 'capture'), { amount: 1501 }),
    402,
    'insufficient_funds',
    'amount',
  )
  assert.equal((await get(auth.id)).status, 'pending', 'a refused capture changes nothing')
  const txn = await post(t, token, sim(auth.id, 'capture'), { amount: 1500 }, 201)
  assert.equal(txn.amount, 1500)
  const a = await get(auth.id)
  assert.deepEqual([a.status, a.held_amount, a.captured_amount], ['closed', 0, 1500])
  assert.deepEqual(await balances(t, token, f.account.id), { ledger: 0, held: 0, available: 0 })
  assert.deepEqual(await entries(t, token, f.account.id), [
    ['hold', -1000],
    ['capture', -1500],
  ])
})

test('the expiry job releases holds 7 days after approval (not before), status expired, authorization.updated', async () => {
  const f = await fundedCard(t, tenant, token, 5000)
  const auth = await expectApproved(t, token, f.card.id, 1200)
  const capturedLater = await expectApproved(t, token, f.card.id, 300)
  await post(t, token, sim(capturedLater.id, 'capture'), {}, 201)
  await ensureSchedules(t.deps, t.jobs)
  t.clock.advance(7 * 24 * 3600 * 1000 - 60_000)
  token = await tenant.token()
  await runJobs(t)
  assert.equal((await get(auth.id)).status, 'pending')
  t.clock.advance(120_000)
  await runJobs(t)
  token = await tenant.token()
  const expired = await get(auth.id)
  assert.deepEqual([expired.status, expired.held_amount], ['expired', 0])
  assert.equal((await get(capturedLater.id)).status, 'closed')
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 4700,
    held: 0,
    available: 4700,
  })
  assert.deepEqual(
    (await eventsFor(t, auth.id)).map((e) => [e.type, e.object.status]),
    [
      ['authorization.created', 'pending'],
      ['authorization.updated', 'expired'],
    ],
  )
  assert.deepEqual((await entries(t, token, f.account.id)).slice(-1), [['hold_release', 1200]])
})

test('simulated expiry now (no body fields accepted); an expired authorization can still be captured from the available balance (late presentment)', async () => {
  const f = await fundedCard(t, tenant, token, 2000)
  const auth = await expectApproved(t, token, f.card.id, 800)
  expectError(
    await t.api(token, 'POST', sim(auth.id, 'expire'), { reason: 'x' }),
    400,
    'unknown_parameter',
    'reason',
  )
  const expired = await post(t, token, sim(auth.id, 'expire'))
  assert.deepEqual([expired.status, expired.held_amount], ['expired', 0])
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 2000,
    held: 0,
    available: 2000,
  })
  expectError(
    await t.api(token, 'POST', sim(auth.id, 'capture')),
    400,
    'missing_parameter',
    'amount',
  )
  expectError(
    await t.api(token, 'POST', sim(auth.id, 'capture'), { amount: 2001 }),
    402,
    'insufficient_funds',
  )
  const txn = await post(t, token, sim(auth.id, 'capture'), { amount: 800 }, 201)
  assert.equal(txn.status, 'pending')
  const closed = await get(auth.id)
  assert.deepEqual([closed.status, closed.captured_amount], ['closed', 800])
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 1200,
    held: 0,
    available: 1200,
  })
})

test('holds on a blocked account still capture and release, but nothing beyond them; new authorizations decline', async () => {
  const f = await fundedCard(t, tenant, token, 2000)
  const a = await expectApproved(t, token, f.card.id, 500)
  const b = await expectApproved(t, token, f.card.id, 500)
  const late = await expectApproved(t, token, f.card.id, 200)
  await post(t, token, sim(late.id, 'expire'))
  await post(t, token, `/v1/accounts/${f.account.id}/block`)
  expectError(
    await t.api(token, 'POST', sim(a.id, 'capture'), { amount: 700 }),
    422,
    'account_blocked',
    'amount',
  )
  expectError(
    await t.api(token, 'POST', sim(late.id, 'capture'), { amount: 200 }),
    422,
    'account_blocked',
    'amount',
  )
  assert.deepEqual(
    await balances(t, token, f.account.id),
    { ledger: 2000, held: 1000, available: 1000 },
    'a refused capture moves nothing',
  )
  await post(t, token, sim(a.id, 'capture'), {}, 201)
  await post(t, token, sim(b.id, 'reverse'))
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 1500,
    held: 0,
    available: 1500,
  })
})

test('lists filter by card_id, account_id and status and paginate newest first; reads need transactions:read', async () => {
  const f = await fundedCard(t, tenant, token, 10_000)
  const g = await fundedCard(t, tenant, token, 10_000)
  const a1 = await expectApproved(t, token, f.card.id, 100)
  const a2 = await expectApproved(t, token, f.card.id, 200)
  const a3 = await expectApproved(t, token, g.card.id, 300)
  await post(t, token, sim(a1.id, 'reverse'))
  const list = async (q: string) => {
    const res = await t.api(token, 'GET', `/v1/authorizations?${q}`)
    assert.equal(res.statusCode, 200, res.body)
    return res.json()
  }
  assert.deepEqual(
    (await list(`card_id=${f.card.id}`)).data.map((a: any) => a.id),
    [a2.id, a1.id],
  )
  assert.deepEqual(
    (await list(`account_id=${g.account.id}`)).data.map((a: any) => a.id),
    [a3.id],
  )
  assert.deepEqual(
    (await list(`card_id=${f.card.id}&status=reversed`)).data.map((a: any) => a.id),
    [a1.id],
  )
  const page = await list(`card_id=${f.card.id}&limit=1`)
  assert.deepEqual(
    [page.object, page.url, page.has_more, page.data[0].id],
    ['list', '/v1/authorizations', true, a2.id],
  )
  const next = await list(`card_id=${f.card.id}&limit=1&starting_after=${page.next_cursor}`)
  assert.deepEqual([next.has_more, next.data[0].id, next.next_cursor], [false, a1.id, null])
  expectError(
    await t.api(token, 'GET', '/v1/authorizations?status=open'),
    400,
    'invalid_parameter',
    'status',
  )
  expectError(
    await t.api(token, 'GET', '/v1/authorizations/auth_00000000000000000000000000'),
    404,
    'authorization_not_found',
  )
  const narrow = await tenant.token('cards:read')
  expectError(await t.api(narrow, 'GET', '/v1/authorizations'), 403, 'insufficient_scope')
  expectError(await t.api(narrow, 'GET', `/v1/authorizations/${a1.id}`), 403, 'insufficient_scope')
  expectError(
    await authorizeRaw(t, await tenant.token('transactions:read'), f.card.id, 100),
    403,
    'insufficient_scope',
  )
  const stranger = await createTenant(t)
  expectError(
    await t.api(await stranger.token(), 'GET', `/v1/authorizations/${a1.id}`),
    404,
    'authorization_not_found',
  )
  expectError(
    await t.api(await stranger.token(), 'POST', sim(a2.id, 'reverse')),
    404,
    'authorization_not_found',
  )
})
