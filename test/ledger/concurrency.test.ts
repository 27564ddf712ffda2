import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { clientTxnLockKey } from '../../src/modules/ledger/service.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withApprovedCardholder } from '../helpers/tenant.js'
import { openAccount } from '../accounts/support.js'

let t: TestApp
let tenant: TestClient
let token: string
let cardholder: any

withApprovedCardholder((fixture) => ({ t, tenant, token, cardholder } = fixture))

interface Op {
  direction: 'credit' | 'debit'
  body: { amount: number; client_transaction_id?: string }
}

/** A seeded generator, so a failure can be replayed. */
function rng(seed: number): () => number {
  let s = seed >>> 0
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0
    return s / 2 ** 32
  }
}

describe('concurrent credits and debits on one account', () => {
  test('200 parallel adjustments with duplicated client_transaction_ids: balances equal the applied entries, available never negative, each id moved money once', async (ctx) => {
    const seed = Number(process.env.LEDGER_SEED ?? Date.now() % 100000)
    const random = rng(seed)
    const account = await openAccount(t, token, tenant.programs.full, cardholder.id)
    assert.equal(
      (await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: 3000 }))
        .statusCode,
      200,
    )

    const unique: Op[] = Array.from({ length: 140 }, (_, i) => ({
      direction: random() < 0.5 ? 'credit' : 'debit',
      body: { amount: 1 + Math.floor(random() * 500), client_transaction_id: `op-${i}` },
    }))
    const anonymous: Op[] = Array.from({ length: 20 }, () => ({
      direction: random() < 0.5 ? 'credit' : 'debit',
      body: { amount: 1 + Math.floor(random() * 500) },
    }))
    const duplicates: Op[] = Array.from({ length: 40 }, (_, i) => {
      const original = unique[Math.floor(random() * unique.length)]
      // Most duplicates are exact retries; some reuse the id with another amount.
      return i % 4 === 3
        ? {
            direction: original.direction,
            body: { ...original.body, amount: original.body.amount + 1 },
          }
        : { direction: original.direction, body: { ...original.body } }
    })
    const ops = [...unique, ...anonymous, ...duplicates].sort(() => random() - 0.5)
    assert.equal(ops.length, 200)

    const responses = await Promise.all(
      ops.map((op) => t.api(token, 'POST', `/v1/accounts/${account.id}/${op.direction}`, op.body)),
    )

    const outcomes = responses.map((r, i) => ({
      op: ops[i],
      status: r.statusCode,
      code: r.statusCode === 200 ? null : r.json().error.code,
      replay: r.headers['idempotent-replay'] === 'true',
      body: r.json(),
    }))
    for (const o of outcomes) {
      const allowed =
        o.status === 200 ||
        (o.status === 402 && o.code === 'insufficient_funds') ||
        (o.status === 409 &&
          (o.code === 'adjustment_already_applied' || o.code === 'idempotency_request_in_progress'))
      assert.ok(allowed, `seed ${seed}: unexpected ${o.status} ${JSON.stringify(o.body)}`)
      if (o.status === 200)
        assert.ok(o.body.available_balance >= 0, `seed ${seed}: negative available in a response`)
    }

    const tally = new Map<string, number>()
    for (const o of outcomes) {
      const key =
        o.status === 200 ? (o.replay ? '200 replay' : '200 applied') : `${o.status} ${o.code}`
      tally.set(key, (tally.get(key) ?? 0) + 1)
    }
    ctx.diagnostic(
      `seed ${seed} (${t.handle.kind}): ${[...tally].map(([k, n]) => `${k}: ${n}`).join(', ')}`,
    )

    const final = (await t.api(token, 'GET', `/v1/accounts/${account.id}`)).json()
    const entries = await t.deps.db
      .selectFrom('ledger_entries')
      .selectAll()
      .where('account_id', '=', account.id)
      .orderBy('seq')
      .execute()
    const sum = entries.reduce((s, e) => s + Number(e.amount), 0)
    assert.equal(
      final.ledger_balance,
      sum,
      `seed ${seed}: ledger balance is the sum of the entries`,
    )
    assert.equal(final.available_balance, final.ledger_balance - final.held_balance)
    assert.ok(final.available_balance >= 0)

    // The ledger reads back as a chain: each entry's balance follows from the one before it, never below zero.
    let running = 0
    entries.forEach((e, i) => {
      assert.equal(Number(e.seq), i + 1, 'entry sequence has no gaps')
      running += Number(e.amount)
      assert.equal(Number(e.ledger_balance_after), running)
      assert.ok(
        Number(e.available_balance_after) >= 0,
        `seed ${seed}: a debit drove available below zero`,
      )
    })

    // Each client_transaction_id moved money at most once, and exactly as often as a request was told it applied.
    const byId = new Map<string, typeof entries>()
    for (const e of entries)
      if (e.client_transaction_id)
        byId.set(e.client_transaction_id, [...(byId.get(e.client_transaction_id) ?? []), e])
    for (const [id, list] of byId)
      assert.equal(list.length, 1, `seed ${seed}: ${id} applied ${list.length} times`)
    const appliedResponses = outcomes.filter((o) => o.status === 200 && !o.replay)
    assert.equal(appliedResponses.length, entries.length - 1, 'every non-replayed 200 is one entry')
    for (const o of outcomes.filter((x) => x.replay)) {
      const entry = byId.get(o.op.body.client_transaction_id!)?.[0]
      assert.ok(entry, 'a replay names an applied id')
      assert.equal(entry.type, o.op.direction)
      assert.equal(Math.abs(Number(entry.amount)), o.op.body.amount)
    }
    for (const o of outcomes.filter((x) => x.code === 'adjustment_already_applied')) {
      const entry = byId.get(o.op.body.client_transaction_id!)?.[0]
      assert.ok(
        entry &&
          (entry.type !== o.op.direction || Math.abs(Number(entry.amount)) !== o.op.body.amount),
      )
    }
  })

  test('a duplicate arriving while the original still runs answers 409 idempotency_request_in_progress', async (ctx) => {
    if (t.handle.kind !== 'postgres') return ctx.skip('needs two database connections (PostgreSQL)')
    const account = await openAccount(t, token, tenant.programs.full, cardholder.id)
    const [k1, k2] = clientTxnLockKey(account.id, 'slow-1')
    // Stand in for the original request: hold its lock in an open transaction on another connection.
    await t.deps.db.transaction().execute(async (trx) => {
      await sql`SELECT pg_advisory_xact_lock(${k1}::int, ${k2}::int)`.execute(trx)
      const res = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
        amount: 5,
        client_transaction_id: 'slow-1',
      })
      assert.equal(res.statusCode, 409, res.body)
      assert.equal(res.json().error.code, 'idempotency_request_in_progress')
    })
    const done = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, {
      amount: 5,
      client_transaction_id: 'slow-1',
    })
    assert.equal(done.statusCode, 200)
    assert.equal(done.json().ledger_balance, 5)
  })
})
