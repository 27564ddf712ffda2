import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { RequestCtx } from '../../src/http/context.js'
import { ApiError } from '../../src/http/errors.js'
import { newId } from '../../src/lib/ids.js'
import * as repo from '../../src/modules/ledger/repo.js'
import { adjustBalance, MAX_BALANCE, type AdjustmentOutcome } from '../../src/modules/ledger/service.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { approvedCardholder, eventsOf, openAccount } from '../accounts/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any
let ctx: RequestCtx

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
  token = await tenant.token()
  cardholder = await approvedCardholder(t, token)
  ctx = { requestId: 'req_test', organizationId: tenant.organizationId, environment: tenant.environment, clientId: tenant.clientId, scopes: new Set(['accounts:write']) }
})
after(async () => { await t.close() })

/** An open USD account funded with 1,000 under client_transaction_id `seed-<name>`. */
async function fundedAccount(name: string): Promise<any> {
  const account = await openAccount(t, token, tenant.programs.full, cardholder.id)
  const res = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 1000, client_transaction_id: `seed-${name}` })
  assert.equal(res.statusCode, 200, res.body)
  return account
}

async function entriesOf(accountId: string): Promise<any[]> {
  const res = await t.api(token, 'GET', `/v1/accounts/${accountId}/entries?limit=100`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.reverse() // oldest first
}

/** What a service call ended in: the account and replay flag, or the error code. */
async function settle(p: Promise<AdjustmentOutcome>): Promise<{ ok: AdjustmentOutcome } | { code: string }> {
  try { return { ok: await p } } catch (err) {
    if (err instanceof ApiError) return { code: err.code }
    throw err
  }
}

describe('credits and debits that wait together go in one statement', () => {
  test('one statement applies a mixed batch: each adjustment applies or is refused on its own terms', async () => {
    const [a, b, c, blocked] = await Promise.all(['a', 'b', 'c', 'blocked'].map(fundedAccount))
    assert.equal((await t.api(token, 'POST', `/v1/accounts/${blocked.id}/block`, { reason: 'other' })).statusCode, 200)
    const input = (accountId: string, type: 'credit' | 'debit', amount: number, extra: Partial<repo.AdjustmentInput> = {}): repo.AdjustmentInput => ({
      accountId, organizationId: ctx.organizationId, environment: ctx.environment, entryId: newId('le'), eventId: newId('evt'), type,
      delta: type === 'credit' ? amount : -amount, currency: null, clientTransactionId: null, lockKey: null, reference: null, description: null, ...extra,
    })
    const results = await repo.applyAdjustments(t.deps.db, [
      input(a.id, 'credit', 150, { reference: 'r-1' }),
      input(b.id, 'debit', 1001), // more than available
      input(c.id, 'debit', 1000, { currency: 'USD' }), // exactly what is available
      input(blocked.id, 'credit', 5),
      input('acct_does_not_exist', 'credit', 5),
    ], MAX_BALANCE, t.clock.now())

    assert.equal(results.length, 5)
    assert.ok(results.every((r) => r.lock_ok))
    assert.equal(results[0].id, a.id)
    assert.equal((results[0] as any).ledger_balance, 1150)
    assert.equal(results[1].id, null)
    assert.equal(results[2].id, c.id)
    assert.equal((results[2] as any).ledger_balance, 0)
    assert.equal(results[3].id, null)
    assert.equal(results[4].id, null)

    const [entriesA, entriesB, entriesC, entriesBlocked] = await Promise.all([a, b, c, blocked].map((x) => entriesOf(x.id)))
    assert.deepEqual(entriesA.map((e) => [e.type, e.amount, e.ledger_balance_after, e.reference]), [['credit', 1000, 1000, null], ['credit', 150, 1150, 'r-1']])
    assert.equal(entriesB.length, 1)
    assert.deepEqual(entriesC.map((e) => [e.type, e.amount, e.available_balance_after]), [['credit', 1000, 1000], ['debit', -1000, 0]])
    assert.equal(entriesBlocked.length, 1)

    // One event per applied adjustment, carrying the account as that adjustment left it.
    const credited = (await eventsOf(t, ctx.organizationId, 'account.credited')).filter((e) => e.object.id === a.id)
    assert.deepEqual(credited.map((e) => e.object.ledger_balance), [1000, 1150])
    const debited = (await eventsOf(t, ctx.organizationId, 'account.debited')).filter((e) => e.object.id === c.id)
    assert.deepEqual(debited.map((e) => [e.object.ledger_balance, e.object.available_balance]), [[0, 0]])
  })

  test('requests that arrive together get the answers they would get one by one, a repeated client_transaction_id included', async () => {
    const [a, b, c, d, e] = await Promise.all(['a2', 'b2', 'c2', 'd2', 'e2'].map(fundedAccount))
    const outcomes = await Promise.all([
      settle(adjustBalance(t.deps, ctx, a.id, 'credit', { amount: 100, client_transaction_id: 'new-1' })),
      settle(adjustBalance(t.deps, ctx, b.id, 'debit', { amount: 5000 })),
      settle(adjustBalance(t.deps, ctx, c.id, 'credit', { amount: 1000, client_transaction_id: 'seed-c2' })), // the seed again: replay
      settle(adjustBalance(t.deps, ctx, d.id, 'credit', { amount: 7, client_transaction_id: 'seed-d2' })), // the seed's id, another amount
      settle(adjustBalance(t.deps, ctx, e.id, 'credit', { amount: 1, currency: 'EUR' })),
      settle(adjustBalance(t.deps, ctx, a.id, 'credit', { amount: 1 })), // the same account again: after the first
    ])
    const summary = outcomes.map((o) => ('code' in o ? o.code : [o.ok.account.ledger_balance, o.ok.replay]))
    assert.deepEqual(summary, [
      [1100, false],
      'insufficient_funds',
      [1000, true],
      'adjustment_already_applied',
      'currency_mismatch',
      [1101, false],
    ])
    assert.deepEqual((await entriesOf(a.id)).map((x) => x.amount), [1000, 100, 1])
    assert.deepEqual((await entriesOf(c.id)).map((x) => x.amount), [1000])
    assert.deepEqual((await entriesOf(d.id)).map((x) => x.amount), [1000])
  })

  test('adjustments of one account that wait together apply in the order they arrived', async () => {
    const account = await fundedAccount('order')
    const amounts = Array.from({ length: 20 }, (_, i) => i + 1)
    const outcomes = await Promise.all(amounts.map((amount) => adjustBalance(t.deps, ctx, account.id, amount % 3 === 0 ? 'debit' : 'credit', { amount })))
    const entries = (await entriesOf(account.id)).slice(1)
    assert.deepEqual(entries.map((x) => Math.abs(x.amount)), amounts)
    // Each answer shows the account right after its own adjustment.
    assert.deepEqual(outcomes.map((o) => o.account.ledger_balance), entries.map((x) => x.ledger_balance_after))
  })
})
