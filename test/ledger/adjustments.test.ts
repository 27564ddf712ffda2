import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'
import { MAX_BALANCE } from '../../src/modules/ledger/service.js'
import { approvedCardholder, eventsOf, expectError, openAccount } from '../accounts/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any

withApprovedCardholder((fixture) => ({ t, tenant, token, cardholder } = fixture))

const fresh = () => openAccount(t, token, tenant.programs.full, cardholder.id)
const credit = (id: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  t.api(token, 'POST', `/v1/accounts/${id}/credit`, body, headers)
const debit = (id: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
  t.api(token, 'POST', `/v1/accounts/${id}/debit`, body, headers)

describe('credit and debit', () => {
  test('a credit adds to ledger and available balance and answers 200 with the account', async () => {
    const a = await fresh()
    const res = await credit(a.id, { amount: 1500, reference: 'top-up 1' })
    assert.equal(res.statusCode, 200, res.body)
    const body = res.json()
    assert.equal(body.object, 'account')
    assert.equal(body.ledger_balance, 1500)
    assert.equal(body.available_balance, 1500)
    assert.equal(body.held_balance, 0)
    assert.equal(res.headers['idempotent-replay'], undefined)
    const events = (await eventsOf(t, tenant.organizationId, 'account.credited')).filter(
      (e) => e.object.id === a.id,
    )
    assert.equal(events.length, 1)
    assert.equal(events[0].object.ledger_balance, 1500)
  })

  test('a debit takes from the balance and emits account.debited', async () => {
    const a = await fresh()
    await credit(a.id, { amount: 1000 })
    const res = await debit(a.id, { amount: 400 })
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.json().ledger_balance, 600)
    assert.equal(res.json().available_balance, 600)
    assert.equal(
      (await eventsOf(t, tenant.organizationId, 'account.debited')).filter(
        (e) => e.object.id === a.id,
      ).length,
      1,
    )
  })

  test('debit beyond available answers 402 insufficient_funds and moves nothing', async () => {
    const a = await fresh()
    await credit(a.id, { amount: 100 })
    expectError(await debit(a.id, { amount: 101 }), 402, 'insufficient_funds')
    assert.equal((await t.api(token, 'GET', `/v1/accounts/${a.id}`)).json().ledger_balance, 100)
  })

  test('the same client_transaction_id with the same amount replays 200 with Idempotent-Replay and moves nothing', async () => {
    const a = await fresh()
    const first = await credit(a.id, { amount: 700, client_transaction_id: 'dep-1' })
    assert.equal(first.statusCode, 200)
    const again = await credit(a.id, {
      amount: 700,
      client_transaction_id: 'dep-1',
      reference: 'a retry',
    })
    assert.equal(again.statusCode, 200, again.body)
    assert.equal(again.headers['idempotent-replay'], 'true')
    assert.equal(again.json().ledger_balance, 700)
    const entries = (await t.api(token, 'GET', `/v1/accounts/${a.id}/entries`)).json().data
    assert.equal(entries.length, 1)
    assert.equal(
      (await eventsOf(t, tenant.organizationId, 'account.credited')).filter(
        (e) => e.object.id === a.id,
      ).length,
      1,
    )
  })

  test('the same client_transaction_id with another amount or direction is 409 adjustment_already_applied', async () => {
    const a = await fresh()
    await credit(a.id, { amount: 700, client_transaction_id: 'dep-2' })
    expectError(
      await credit(a.id, { amount: 701, client_transaction_id: 'dep-2' }),
      409,
      'adjustment_already_applied',
      'client_transaction_id',
    )
    expectError(
      await debit(a.id, { amount: 700, client_transaction_id: 'dep-2' }),
      409,
      'adjustment_already_applied',
      'client_transaction_id',
    )
    assert.equal((await t.api(token, 'GET', `/v1/accounts/${a.id}`)).json().ledger_balance, 700)
  })

  test('a client_transaction_id never expires: the replay still answers a day later', async () => {
    const a = await fresh()
    await credit(a.id, { amount: 50, client_transaction_id: 'old-1' })
    t.clock.advance(3 * 24 * 3600 * 1000)
    try {
      const fresher = await tenant.token()
      const again = await t.api(fresher, 'POST', `/v1/accounts/${a.id}/credit`, {
        amount: 50,
        client_transaction_id: 'old-1',
      })
      assert.equal(again.headers['idempotent-replay'], 'true')
      assert.equal(again.json().ledger_balance, 50)
    } finally {
      t.clock.advance(-3 * 24 * 3600 * 1000)
    }
  })

  test('client_transaction_id is unique per account, not across accounts', async () => {
    const a = await fresh()
    const b = await fresh()
    await credit(a.id, { amount: 10, client_transaction_id: 'shared' })
    const res = await credit(b.id, { amount: 10, client_transaction_id: 'shared' })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['idempotent-replay'], undefined)
    assert.equal(res.json().ledger_balance, 10)
  })

  test('a debit refused for funds does not consume its client_transaction_id', async () => {
    const a = await fresh()
    expectError(
      await debit(a.id, { amount: 10, client_transaction_id: 'pay-1' }),
      402,
      'insufficient_funds',
    )
    await credit(a.id, { amount: 10 })
    const res = await debit(a.id, { amount: 10, client_transaction_id: 'pay-1' })
    assert.equal(res.statusCode, 200)
    assert.equal(res.headers['idempotent-replay'], undefined)
    assert.equal(res.json().ledger_balance, 0)
  })

  test('an explicit currency other than the account currency is currency_mismatch', async () => {
    const a = await fresh()
    expectError(await credit(a.id, { amount: 10, currency: 'EUR' }), 422, 'currency_mismatch')
    assert.equal((await credit(a.id, { amount: 10, currency: 'usd' })).statusCode, 200)
  })

  test('an account the processor has not created yet refuses adjustments with account_not_provisioned', async () => {
    const a = await fresh()
    // sim_full opens accounts at once; put this one back into the state an asynchronous processor leaves it in.
    await t.deps.db
      .updateTable('accounts')
      .set({ upstream_reference: null })
      .where('id', '=', a.id)
      .execute()
    expectError(await credit(a.id, { amount: 10 }), 422, 'account_not_provisioned')
    expectError(await debit(a.id, { amount: 10 }), 422, 'account_not_provisioned')
  })

  test('amount must be a positive integer up to 10^12', async () => {
    const a = await fresh()
    expectError(await credit(a.id, { amount: 0 }), 400, 'invalid_parameter', 'amount')
    expectError(await credit(a.id, { amount: 1.5 }), 400, 'invalid_parameter', 'amount')
    expectError(
      await credit(a.id, { amount: 1_000_000_000_001 }),
      400,
      'invalid_parameter',
      'amount',
    )
    expectError(await credit(a.id, {}), 400, 'missing_parameter', 'amount')
    expectError(await credit(a.id, { amount: 5, memo: 'x' }), 400, 'unknown_parameter', 'memo')
  })

  test('a string or decimal amount is told to be an integer in minor units', async () => {
    const a = await fresh()
    for (const amount of ['12.50', 12.5, '1250']) {
      const error = expectError(await credit(a.id, { amount }), 400, 'invalid_parameter', 'amount')
      assert.equal(
        error.message,
        'Invalid amount: must be an integer in minor units of the currency (1250 is 12.50 USD), not a string or a decimal.',
      )
    }
  })

  test('a credit that would take the balance beyond the maximum an account holds is account_not_fundable', async () => {
    const a = await fresh()
    // Reaching the cap takes a thousand maximal credits; start the account just below it instead.
    await t.deps.db
      .updateTable('accounts')
      .set({ ledger_balance: MAX_BALANCE - 10 })
      .where('id', '=', a.id)
      .execute()
    assert.equal((await credit(a.id, { amount: 10 })).statusCode, 200)
    expectError(await credit(a.id, { amount: 1 }), 422, 'account_not_fundable')
  })

  test("another organization's account is 404 account_not_found, the same as a missing one", async () => {
    const other = await createTenant(t)
    const otherToken = await other.token()
    const holder = await approvedCardholder(t, otherToken)
    const foreign = await openAccount(t, otherToken, other.programs.full, holder.id)
    expectError(await credit(foreign.id, { amount: 10 }), 404, 'account_not_found')
    expectError(
      await credit('acct_01ARZ3NDEKTSV4RRFFQ69G5FAV', { amount: 10 }),
      404,
      'account_not_found',
    )
    expectError(await t.api(token, 'GET', `/v1/accounts/${foreign.id}`), 404, 'account_not_found')
  })

  test('an Idempotency-Key replays the stored answer of a credit', async () => {
    const a = await fresh()
    const first = await credit(a.id, { amount: 30 }, { 'idempotency-key': `k-${a.id}` })
    const again = await credit(a.id, { amount: 30 }, { 'idempotency-key': `k-${a.id}` })
    assert.equal(again.headers['idempotent-replay'], 'true')
    assert.equal(again.body, first.body)
    assert.equal((await t.api(token, 'GET', `/v1/accounts/${a.id}`)).json().ledger_balance, 30)
  })
})

describe('the ledger', () => {
  test('every movement is an entry, newest first, carrying the balances after it', async () => {
    const a = await fresh()
    await credit(a.id, {
      amount: 1000,
      client_transaction_id: 'c1',
      reference: 'salary',
      description: 'March',
    })
    await debit(a.id, { amount: 300 })
    await credit(a.id, { amount: 5 })
    const res = await t.api(token, 'GET', `/v1/accounts/${a.id}/entries`)
    assert.equal(res.statusCode, 200)
    const list = res.json()
    assert.equal(list.object, 'list')
    assert.equal(list.url, `/v1/accounts/${a.id}/entries`)
    assert.deepEqual(
      list.data.map((e: any) => [
        e.type,
        e.amount,
        e.ledger_balance_after,
        e.available_balance_after,
      ]),
      [
        ['credit', 5, 705, 705],
        ['debit', -300, 700, 700],
        ['credit', 1000, 1000, 1000],
      ],
    )
    const oldest = list.data[2]
    assert.match(oldest.id, /^le_[0-9A-Z]{26}$/)
    assert.equal(oldest.object, 'ledger_entry')
    assert.equal(oldest.client_transaction_id, 'c1')
    assert.equal(oldest.reference, 'salary')
    assert.equal(oldest.description, 'March')
    assert.equal(oldest.currency, 'USD')
    assert.equal(oldest.source_id, null)
  })

  test('entries paginate with cursors in both directions', async () => {
    const a = await fresh()
    for (let i = 1; i <= 5; i++) await credit(a.id, { amount: i })
    const p1 = (await t.api(token, 'GET', `/v1/accounts/${a.id}/entries?limit=2`)).json()
    assert.deepEqual(
      p1.data.map((e: any) => e.amount),
      [5, 4],
    )
    assert.equal(p1.has_more, true)
    const p2 = (
      await t.api(
        token,
        'GET',
        `/v1/accounts/${a.id}/entries?limit=2&starting_after=${p1.next_cursor}`,
      )
    ).json()
    assert.deepEqual(
      p2.data.map((e: any) => e.amount),
      [3, 2],
    )
    const p3 = (
      await t.api(
        token,
        'GET',
        `/v1/accounts/${a.id}/entries?limit=2&starting_after=${p2.next_cursor}`,
      )
    ).json()
    assert.deepEqual(
      p3.data.map((e: any) => e.amount),
      [1],
    )
    assert.equal(p3.has_more, false)
    assert.equal(p3.next_cursor, null)
    const back = (
      await t.api(
        token,
        'GET',
        `/v1/accounts/${a.id}/entries?limit=2&ending_before=${p2.next_cursor}`,
      )
    ).json()
    assert.deepEqual(
      back.data.map((e: any) => e.amount),
      [4, 3],
    )
  })

  test('entries of an unknown account are 404 account_not_found', async () => {
    expectError(
      await t.api(token, 'GET', '/v1/accounts/acct_01ARZ3NDEKTSV4RRFFQ69G5FAV/entries'),
      404,
      'account_not_found',
    )
  })
})
