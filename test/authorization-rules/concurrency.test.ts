/**
 * Velocity limits stay exact under concurrency (docs/authorization-rules.md, "Counters"): two authorizations in flight
 * never both pass a limit only one fits, on one card, across the accounts of one cardholder, and across processes with
 * pools of their own; a decision whose counter changed between its read and its write is not written.
 */
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { openDatabase } from '../../src/db/client.js'
import type { RequestCtx } from '../../src/http/context.js'
import { newId } from '../../src/lib/ids.js'
import { DECISIONS } from '../../src/modules/authorizations/batcher.js'
import { presentRequest } from '../../src/modules/authorizations/engine.js'
import * as repo from '../../src/modules/authorizations/repo.js'
import { buildServices } from '../../src/runtime.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import {
  authorizeRaw,
  expectApproved,
  fundedCard,
  MERCHANT,
  post,
} from '../authorizations/support.js'
import { cardBody, issuedCard, makeAccount } from '../cards/support.js'
import { createRule } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
let ctx: RequestCtx
withTenant((fixture) => {
  ;({ t, tenant, token } = fixture)
  ctx = {
    requestId: 'req_test',
    organizationId: tenant.organizationId,
    environment: tenant.environment,
    clientId: tenant.clientId,
    scopes: new Set(['transactions:write']),
  }
})

/** `count` cards of one cardholder, each on an account of its own, funded far beyond the limits. */
async function holderCards(count: number): Promise<{ holder: string; cards: string[] }> {
  const first = await fundedCard(t, tenant, token, 1_000_000)
  const cards = [first.card.id]
  for (let i = 1; i < count; i++) {
    const account = await makeAccount(t, token, tenant.programs.full.id, first.holder.id)
    await post(t, token, `/v1/accounts/${account.id}/credit`, { amount: 1_000_000 })
    cards.push((await issuedCard(t, token, cardBody(first.holder.id, account.id))).id)
  }
  return { holder: first.holder.id, cards }
}

async function fire(cards: string[], count: number, amount: number): Promise<any[]> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      authorizeRaw(t, token, cards[i % cards.length], amount),
    ),
  )
  for (const res of responses) assert.equal(res.statusCode, 201, res.body)
  return responses.map((r) => r.json())
}

function cardholderLimit(holder: string, limit: Record<string, number>) {
  return createRule(t, token, {
    scope: { level: 'cardholder', ids: [holder] },
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'cardholder', ...limit },
  })
}

test('30 simultaneous authorizations on one card against a count limit of 10 approve exactly 10', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000)
  const rule = await createRule(t, token, {
    scope: { level: 'card', ids: [f.card.id] },
    type: 'velocity_limit',
    parameters: { window: { type: 'day' }, aggregate: 'card', limit_count: 10 },
  })
  const results = await fire([f.card.id], 30, 100)
  assert.equal(results.filter((a) => a.approved).length, 10)
  assert.ok(
    results
      .filter((a) => !a.approved)
      .every((a) => a.decline_reason === 'rule_declined' && a.rule_id === rule.id),
  )
})

test("60 simultaneous authorizations on four accounts of one cardholder against the cardholder's amount limit approve exactly what it covers", async () => {
  const { holder, cards } = await holderCards(4)
  await cardholderLimit(holder, { limit_amount: 1700 })
  const results = await fire(cards, 60, 100)
  assert.equal(results.filter((a) => a.approved).length, 17)
  assert.ok(results.filter((a) => !a.approved).every((a) => a.decline_reason === 'rule_declined'))
})

test("an approval decided before another account of the cardholder changed the cardholder's counter writes nothing; decided again, it holds", async () => {
  const { holder, cards } = await holderCards(2)
  await cardholderLimit(holder, { limit_count: 2 })
  // The first card's decision is read, then the other account's approval changes the shared counter.
  const facts = (await repo.readDecisionFacts(t.deps.db, [cards[0]], false)).get(cards[0])!
  const [counter] = [...facts.counters.values()]
  assert.ok(counter.version)
  await expectApproved(t, token, cards[1], 100)
  const p = await presentRequest(t.deps, ctx, {
    card_id: cards[0],
    amount: 100,
    currency: 'USD',
    merchant: MERCHANT,
  })
  const write = approvalOn(facts, p.id, p.at)
  const { stale } = await repo.recordDecisions(t.deps.db, [write], new Date())
  assert.deepEqual([...stale], [facts.account.id])
  assert.equal(
    await t.deps.db
      .selectFrom('authorizations')
      .select('id')
      .where('id', '=', p.id)
      .executeTakeFirst(),
    undefined,
  )
  // Through the batcher it is decided again on a fresh read: the second of two.
  const decided = await t.deps.state.of(DECISIONS).decide(p)
  assert.equal(decided.approved, true)
  const third = (await authorizeRaw(t, token, cards[0], 100)).json()
  assert.equal(third.decline_reason, 'rule_declined')
})

/** The write of an approval of 100 on the card of `facts`, counted in its velocity counters, as the engine makes it. */
function approvalOn(facts: repo.DecisionFacts, id: string, at: Date): repo.DecisionWrite {
  const keys = [...facts.counters.keys()]
  const row: repo.AuthorizationRow = {
    id,
    organization_id: facts.card.organization_id,
    environment: facts.card.environment,
    program_id: facts.card.program_id,
    card_id: facts.card.id,
    account_id: facts.account.id,
    network_token_id: null,
    status: 'pending',
    approved: true,
    amount: 100,
    held_amount: 100,
    captured_amount: 0,
    reversed_amount: 0,
    currency: 'USD',
    merchant_amount: 100,
    merchant_currency: 'USD',
    fx: null,
    merchant: { name: 'Corner Cafe', mcc: '5814', city: null, country: 'USA' },
    decline_reason: null,
    rule_id: null,
    rule_results: [],
    rule_counters: keys.map((key) => [key, 0] as const),
    hold_id: newId('hold'),
    request_history: [],
    decision: { source: 'svc', latency_ms: 0 },
    expires_at: new Date(at.getTime() + 86_400_000),
    created_at: at,
    updated_at: at,
  }
  return {
    row,
    view: { id },
    eventId: newId('evt'),
    entryId: newId('le'),
    versions: facts.versions,
    operationId: null,
    answer: null,
    guards: keys.map((key) => ({ key, version: facts.counters.get(key)!.version })),
    counts: keys.map((key) => ({
      key,
      bucket: 0,
      amount: 100,
      count: 1,
      keep_from: 0,
      expires_at: null,
    })),
  }
}

test("increments on one account and new authorizations on another never take the cardholder's limit past what it covers", async () => {
  const { holder, cards } = await holderCards(2)
  await cardholderLimit(holder, { limit_amount: 2000 })
  const first = await expectApproved(t, token, cards[0], 100)
  const results = await Promise.all([
    ...Array.from({ length: 20 }, () =>
      post(t, token, `/v1/simulate/authorizations/${first.id}/increment`, { amount: 100 }),
    ),
    ...Array.from({ length: 20 }, () =>
      authorizeRaw(t, token, cards[1], 100).then((r) => r.json()),
    ),
  ])
  const raised = results.slice(0, 20).map((a) => a.request_history.at(-1))
  const approvedIncrements = raised.filter((r) => r.approved).length
  const approvedNew = results.slice(20).filter((a) => a.approved).length
  assert.equal(100 + 100 * (approvedIncrements + approvedNew), 2000)
  assert.ok(
    [...raised.filter((r) => !r.approved), ...results.slice(20).filter((a) => !a.approved)].every(
      (x) => x.decline_reason === 'rule_declined',
    ),
  )
})

test("two processes deciding on a cardholder's accounts at once never pass the cardholder's limit; every request is answered", async (tc) => {
  if (t.handle.kind !== 'postgres') return tc.skip('needs two connection pools (PostgreSQL)')
  const { holder, cards } = await holderCards(4)
  await cardholderLimit(holder, { limit_count: 53 })
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
    // Every request presented first, then all sent at once: each process's batches read the counter while the
    // other's are in flight. Each process decides on two accounts of its own: they share nothing but the counter.
    const presented = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        presentRequest(t.deps, ctx, {
          card_id: cards[i % cards.length],
          amount: 100,
          currency: 'USD',
          merchant: MERCHANT,
        }),
      ),
    )
    const views = await Promise.all(presented.map((p, i) => batchers[i % 4 < 2 ? 0 : 1].decide(p)))
    assert.equal(views.length, 200)
    assert.equal(views.filter((v) => v.approved).length, 53)
    assert.ok(views.filter((v) => !v.approved).every((v) => v.decline_reason === 'rule_declined'))
    const approvedRows = await t.deps.db
      .selectFrom('authorizations')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('card_id', 'in', cards)
      .where('approved', '=', true)
      .executeTakeFirstOrThrow()
    assert.equal(Number(approvedRows.n), 53)
  } finally {
    await other.close()
  }
})
