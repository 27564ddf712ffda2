import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { openDatabase } from '../../src/db/client.js'
import type { RequestCtx } from '../../src/http/context.js'
import { ApiError } from '../../src/http/errors.js'
import { DECISIONS } from '../../src/modules/authorizations/batcher.js'
import {
  decideBatch,
  decideLocked,
  presentRequest,
  type DecisionOutcome,
} from '../../src/modules/authorizations/engine.js'
import { buildServices } from '../../src/runtime.js'
import { eventsFor } from '../helpers/api.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { balances, fundedCard, MERCHANT, post, secondCard } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
let ctx: RequestCtx

withTenant(async (fixture) => {
  ;({ t, tenant, token } = fixture)
  ctx = {
    requestId: 'req_test',
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    clientId: tenant.clientId,
    scopes: new Set(['transactions:write']),
  }
})

const body = (cardId: string, amount: number, extra: Record<string, unknown> = {}) => ({
  card_id: cardId,
  amount,
  currency: 'USD',
  merchant: MERCHANT,
  ...extra,
})

/** What each outcome came to: approved, the decline reason, the error code, or stale. */
function summary(outcomes: DecisionOutcome[]): string[] {
  return outcomes.map((o) => {
    if ('error' in o)
      return o.error instanceof ApiError ? `error ${o.error.code}` : `error ${String(o.error)}`
    if ('stale' in o) return 'stale'
    if ('clock' in o) return `clock ${o.clock}`
    return o.view.approved ? `approved ${o.view.amount}` : `declined ${o.view.decline_reason}`
  })
}

/** The account's hold entries in ledger order: [amount, available balance after]. */
async function holdEntries(accountId: string): Promise<[number, number][]> {
  const rows = await t.deps.db
    .selectFrom('ledger_entries')
    .select(['amount', 'available_balance_after'])
    .where('account_id', '=', accountId)
    .where('type', '=', 'hold')
    .orderBy('seq')
    .execute()
  return rows.map((r) => [Number(r.amount), Number(r.available_balance_after)])
}

describe('new authorizations that wait together are decided together', () => {
  test("one batch decides in arrival order: an account's approvals count against its balance and a card's against its limit; errors stay with their request", async () => {
    const limited = await fundedCard(t, tenant, token, 10_000, {
      spending_controls: { spending_limits: [{ amount: 1000, interval: 'daily' }] },
    })
    const small = await fundedCard(t, tenant, token, 500)
    const sibling = await secondCard(t, token, small)
    const frozen = await fundedCard(t, tenant, token, 500)
    await post(t, token, `/v1/cards/${frozen.card.id}/freeze`)
    const stranger = await createTenant(t)
    const theirs = await fundedCard(t, stranger, await stranger.token(), 500)

    const presented = await Promise.all(
      [
        body(limited.card.id, 600),
        body(small.card.id, 300),
        body(limited.card.id, 600),
        body(sibling.id, 300),
        body('card_does_not_exist', 100),
        body(limited.card.id, 400),
        body(sibling.id, 200),
        body(frozen.card.id, 100),
        body(theirs.card.id, 100),
        body(small.card.id, 100, { network_token_id: 'ntok_not_of_this_card' }),
        body(limited.card.id, 1),
      ].map((b) => presentRequest(t.deps, ctx, b)),
    )
    const outcomes = await decideBatch(t.deps, t.deps.db, presented, false)
    assert.deepEqual(summary(outcomes), [
      'approved 600',
      'approved 300',
      'declined spending_limit',
      'declined insufficient_funds',
      'error card_not_found',
      'approved 400',
      'approved 200',
      'declined card_frozen',
      'error card_not_found',
      'error token_not_found',
      'declined spending_limit',
    ])
    assert.deepEqual(await holdEntries(limited.account.id), [
      [-600, 9400],
      [-400, 9000],
    ])
    assert.deepEqual(await holdEntries(small.account.id), [
      [-300, 200],
      [-200, 0],
    ])
    assert.deepEqual(await balances(t, token, small.account.id), {
      ledger: 500,
      held: 500,
      available: 0,
    })
    // Every decision written has its event; what errored wrote nothing.
    for (const o of outcomes) {
      if ('view' in o)
        assert.deepEqual(
          (await eventsFor(t, o.view.id)).map((e) => [e.type, e.object.status]),
          [['authorization.created', o.view.status]],
        )
    }
    assert.equal(
      (
        await t.deps.db
          .selectFrom('authorizations')
          .select('id')
          .where(
            'id',
            'in',
            presented.map((p) => p.id),
          )
          .execute()
      ).length,
      8,
    )
  })

  test("the process's batcher answers each request with its own decision, the declines included", async () => {
    const f = await fundedCard(t, tenant, token, 1000)
    const batcher = t.deps.state.of(DECISIONS)
    const views = await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        presentRequest(
          t.deps,
          ctx,
          body(f.card.id, 100, { merchant: { ...MERCHANT, name: `m-${i}` } }),
        ).then((p) => batcher.decide(p)),
      ),
    )
    assert.deepEqual(
      views.map((v) => v.merchant.name),
      Array.from({ length: 25 }, (_, i) => `m-${i}`),
    )
    assert.equal(views.filter((v) => v.approved).length, 10)
    assert.deepEqual(
      (await holdEntries(f.account.id)).map(([, available]) => available),
      Array.from({ length: 10 }, (_, i) => 900 - i * 100),
    )
  })

  test("a checked security code's processor call is marked succeeded with the decision it led to", async () => {
    const f = await fundedCard(t, tenant, token, 1000)
    const stateOf = (operationId: string) =>
      t.deps.db
        .selectFrom('processor_operations')
        .select('state')
        .where('id', '=', operationId)
        .executeTakeFirstOrThrow()
        .then((r) => r.state)
    const wrong = await presentRequest(t.deps, ctx, body(f.card.id, 100, { cvc: '000' }))
    const [outcome] = await decideBatch(t.deps, t.deps.db, [wrong], false)
    assert.deepEqual(summary([outcome]), [
      wrong.cvc!.matches ? 'approved 100' : 'declined invalid_cvc',
    ])
    assert.equal(await stateOf(wrong.cvc!.operationId), 'succeeded')
  })

  test("after losing a few rounds a decision goes under its account's row lock, in a transaction of its own", async () => {
    const f = await fundedCard(t, tenant, token, 1000)
    const approved = await decideLocked(
      t.deps,
      await presentRequest(t.deps, ctx, body(f.card.id, 700)),
    )
    const declined = await decideLocked(
      t.deps,
      await presentRequest(t.deps, ctx, body(f.card.id, 301)),
    )
    assert.deepEqual(
      [approved.status, declined.status, declined.decline_reason],
      ['pending', 'declined', 'insufficient_funds'],
    )
    assert.deepEqual(await holdEntries(f.account.id), [[-700, 300]])
    await assert.rejects(
      decideLocked(t.deps, await presentRequest(t.deps, ctx, body('card_does_not_exist', 1))),
      (err) => err instanceof ApiError && err.code === 'card_not_found',
    )
  })

  test('two processes deciding on one account at once never overspend; every request is answered', async (tc) => {
    if (t.handle.kind !== 'postgres') return tc.skip('needs two connection pools (PostgreSQL)')
    const f = await fundedCard(t, tenant, token, 7300)
    const cards = [
      f.card.id,
      (await secondCard(t, token, f)).id,
      (await secondCard(t, token, f)).id,
    ]
    // A second process: its own pool and its own batcher on the same database.
    const other = await openDatabase({
      databaseUrl: t.deps.config.databaseUrl,
      dataDir: null,
      poolSize: 4,
    })
    try {
      const batchers = [
        t.deps.state.of(DECISIONS),
        buildServices({ ...t.deps, db: other.db }).state.of(DECISIONS),
      ]
      const views = await Promise.all(
        Array.from({ length: 200 }, async (_, i) => {
          const p = await presentRequest(t.deps, ctx, body(cards[i % 3], 100))
          return batchers[(i >> 2) % 2].decide(p)
        }),
      )
      assert.equal(views.length, 200)
      assert.equal(views.filter((v) => v.approved).length, 73)
      assert.ok(
        views.filter((v) => !v.approved).every((v) => v.decline_reason === 'insufficient_funds'),
      )
      assert.deepEqual(await balances(t, token, f.account.id), {
        ledger: 7300,
        held: 7300,
        available: 0,
      })
      assert.deepEqual(
        (await holdEntries(f.account.id)).map(([, available]) => available),
        Array.from({ length: 73 }, (_, i) => 7200 - i * 100),
      )
    } finally {
      await other.close()
    }
  })
})
