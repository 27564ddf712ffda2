import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { RequestCtx } from '../../src/http/context.js'
import { ApiError } from '../../src/http/errors.js'
import { newId } from '../../src/lib/ids.js'
import * as repo from '../../src/modules/ledger/repo.js'
import {
  adjustBalance,
  MAX_BALANCE,
  type AdjustmentOutcome,
} from '../../src/modules/ledger/service.js'
import { ADJUSTMENTS, AdjustmentBatcher } from '../../src/modules/ledger/batcher.js'
import { openDatabase } from '../../src/db/client.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'
import { eventsOf, ledgerEntries, openAccount } from '../accounts/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any
let ctx: RequestCtx

withApprovedCardholder((fixture) => {
  ;({ t, tenant, token, cardholder } = fixture)
  ctx = {
    requestId: 'req_test',
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    clientId: tenant.clientId,
    scopes: new Set(['accounts:write']),
  }
})

/** An open USD account funded with 1,000 under client_transaction_id `seed-<name>`. */
async function fundedAccount(name: string): Promise<any> {
  const account = await openAccount(t, token, tenant.programs.full, cardholder.id)
  const res = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
    amount: 1000,
    client_transaction_id: `seed-${name}`,
  })
  assert.equal(res.statusCode, 200, res.body)
  return account
}

const entriesOf = (accountId: string) => ledgerEntries(t, token, accountId)

/** What a service call ended in: the account and replay flag, or the error code. */
async function settle(
  p: Promise<AdjustmentOutcome>,
): Promise<{ ok: AdjustmentOutcome } | { code: string }> {
  try {
    return { ok: await p }
  } catch (err) {
    if (err instanceof ApiError) return { code: err.code }
    throw err
  }
}

describe('credits and debits that wait together go in one statement', () => {
  test("one statement applies a mixed batch as if one by one in order: refusals write nothing, an account's adjustments after its refusal are deferred", async () => {
    const [a, b, c, blocked] = await Promise.all(['a', 'b', 'c', 'blocked'].map(fundedAccount))
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${blocked.id}/block`, { reason: 'other' }))
        .statusCode,
      200,
    )
    const input = (
      accountId: string,
      type: 'credit' | 'debit',
      amount: number,
      extra: Partial<repo.AdjustmentInput> = {},
    ): repo.AdjustmentInput => ({
      accountId,
      organizationId: ctx.organizationId,
      environment: ctx.environment,
      entryId: newId('le'),
      type,
      delta: type === 'credit' ? amount : -amount,
      currency: null,
      clientTransactionId: null,
      lockKey: null,
      reference: null,
      description: null,
      answer: null,
      ...extra,
    })
    const results = await repo.applyAdjustments(
      t.deps.db,
      [
        input(a.id, 'credit', 150, { reference: 'r-1' }),
        input(b.id, 'debit', 1001), // more than available
        input(c.id, 'debit', 600, { currency: 'USD' }),
        input(blocked.id, 'credit', 5),
        input('acct_does_not_exist', 'credit', 5),
        input(a.id, 'debit', 1151), // one more than the credit before it left: refused
        input(c.id, 'debit', 400), // exactly what the debit before it left
        input(a.id, 'credit', 5), // after a refusal of its account: not tried
      ],
      MAX_BALANCE,
      t.clock.now(),
    )

    assert.equal(results.length, 8)
    assert.ok(results.every((r) => r.lock_ok))
    const summary = results.map((r) =>
      r.deferred
        ? 'deferred'
        : r.id === null
          ? 'refused'
          : [r.id, (r as any).ledger_balance, (r as any).entry_seq],
    )
    assert.deepEqual(summary, [
      [a.id, 1150, 2],
      'refused',
      [c.id, 400, 2],
      'refused',
      'refused',
      'refused',
      [c.id, 0, 3],
      'deferred',
    ])

    const [entriesA, entriesB, entriesC, entriesBlocked] = await Promise.all(
      [a, b, c, blocked].map((x) => entriesOf(x.id)),
    )
    assert.deepEqual(
      entriesA.map((e) => [e.type, e.amount, e.ledger_balance_after, e.reference]),
      [
        ['credit', 1000, 1000, null],
        ['credit', 150, 1150, 'r-1'],
      ],
    )
    assert.equal(entriesB.length, 1)
    assert.deepEqual(
      entriesC.map((e) => [e.type, e.amount, e.available_balance_after]),
      [
        ['credit', 1000, 1000],
        ['debit', -600, 400],
        ['debit', -400, 0],
      ],
    )
    assert.equal(entriesBlocked.length, 1)
    const accountC = (await t.api(token, 'GET', `/v1/accounts/${c.id}`)).json()
    assert.deepEqual([accountC.ledger_balance, accountC.available_balance], [0, 0])

    // One event per applied adjustment, carrying the account as that adjustment left it.
    const credited = (await eventsOf(t, ctx.organizationId, 'account.credited')).filter(
      (e) => e.object.id === a.id,
    )
    assert.deepEqual(
      credited.map((e) => e.object.ledger_balance),
      [1000, 1150],
    )
    const debited = (await eventsOf(t, ctx.organizationId, 'account.debited')).filter(
      (e) => e.object.id === c.id,
    )
    assert.deepEqual(
      debited.map((e) => [e.object.ledger_balance, e.object.available_balance]),
      [
        [400, 400],
        [0, 0],
      ],
    )
  })

  test('requests that arrive together get the answers they would get one by one, a repeated client_transaction_id included', async () => {
    const [a, b, c, d, e] = await Promise.all(['a2', 'b2', 'c2', 'd2', 'e2'].map(fundedAccount))
    const outcomes = await Promise.all([
      settle(
        adjustBalance(t.deps, ctx, a.id, 'credit', { amount: 100, client_transaction_id: 'new-1' }),
      ),
      settle(adjustBalance(t.deps, ctx, b.id, 'debit', { amount: 5000 })),
      settle(
        adjustBalance(t.deps, ctx, c.id, 'credit', {
          amount: 1000,
          client_transaction_id: 'seed-c2',
        }),
      ), // the seed again: replay
      settle(
        adjustBalance(t.deps, ctx, d.id, 'credit', { amount: 7, client_transaction_id: 'seed-d2' }),
      ), // the seed's id, another amount
      settle(adjustBalance(t.deps, ctx, e.id, 'credit', { amount: 1, currency: 'EUR' })),
      settle(adjustBalance(t.deps, ctx, a.id, 'credit', { amount: 1 })), // the same account again: after the first
    ])
    const summary = outcomes.map((o) =>
      'code' in o ? o.code : [o.ok.account.ledger_balance, o.ok.replay],
    )
    assert.deepEqual(summary, [
      [1100, false],
      'insufficient_funds',
      [1000, true],
      'adjustment_already_applied',
      'currency_mismatch',
      [1101, false],
    ])
    assert.deepEqual(
      (await entriesOf(a.id)).map((x) => x.amount),
      [1000, 100, 1],
    )
    assert.deepEqual(
      (await entriesOf(c.id)).map((x) => x.amount),
      [1000],
    )
    assert.deepEqual(
      (await entriesOf(d.id)).map((x) => x.amount),
      [1000],
    )
  })

  test('adjustments of one account that wait together apply in the order they arrived', async () => {
    const account = await fundedAccount('order')
    const amounts = Array.from({ length: 20 }, (_, i) => i + 1)
    const outcomes = await Promise.all(
      amounts.map((amount) =>
        adjustBalance(t.deps, ctx, account.id, amount % 3 === 0 ? 'debit' : 'credit', { amount }),
      ),
    )
    const entries = (await entriesOf(account.id)).slice(1)
    assert.deepEqual(
      entries.map((x) => Math.abs(x.amount)),
      amounts,
    )
    // Each answer shows the account right after its own adjustment.
    assert.deepEqual(
      outcomes.map((o) => o.account.ledger_balance),
      entries.map((x) => x.ledger_balance_after),
    )
  })

  test('two processes batching the same accounts at once: every movement applied once, every ledger chain intact', async (tc) => {
    if (t.handle.kind !== 'postgres') return tc.skip('needs two connection pools (PostgreSQL)')
    const accounts = await Promise.all(['p1', 'p2', 'p3', 'p4', 'p5'].map(fundedAccount))
    // A second process: its own pool and its own batcher on the same database.
    const other = await openDatabase({
      databaseUrl: t.deps.config.databaseUrl,
      dataDir: null,
      poolSize: 4,
    })
    try {
      const batchers = [t.deps.state.of(ADJUSTMENTS), new AdjustmentBatcher(other.db, t.clock, 3)]
      let n = 0
      const submit = () => {
        const account = accounts[n % 5]
        const type = n % 3 === 0 ? 'debit' : 'credit'
        const amount = 1 + ((n * 37) % 400)
        const batcher = batchers[(n >> 2) % 2]
        n++
        return batcher.apply({
          accountId: account.id,
          organizationId: ctx.organizationId,
          environment: ctx.environment,
          entryId: newId('le'),
          type,
          delta: type === 'credit' ? amount : -amount,
          currency: null,
          clientTransactionId: `mp-${n}`,
          lockKey: null,
          reference: null,
          description: null,
          answer: null,
        })
      }
      // Waves of 60, each spread over both processes, so their statements overlap on every account.
      const results: repo.AdjustmentResult[] = []
      for (let wave = 0; wave < 5; wave++)
        results.push(...(await Promise.all(Array.from({ length: 60 }, submit))))
      assert.equal(results.length, 300)
      assert.ok(results.every((r) => r.lock_ok && !r.deferred))
      for (const account of accounts) {
        const entries = await entriesOf(account.id)
        const current = (await t.api(token, 'GET', `/v1/accounts/${account.id}`)).json()
        assert.equal(
          current.ledger_balance,
          entries.reduce((sum, e) => sum + e.amount, 0),
        )
        entries.reduce((before, e) => {
          assert.equal(e.ledger_balance_after, before + e.amount)
          assert.ok(e.available_balance_after >= 0)
          return e.ledger_balance_after
        }, 0)
        const applied = results.filter((r) => r.id === account.id).length
        assert.equal(entries.length, 1 + applied)
      }
    } finally {
      await other.close()
    }
  })
})
