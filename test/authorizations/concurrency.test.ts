import assert from 'node:assert/strict'
import { test } from 'node:test'
import { withTx } from '../../src/db/tx.js'
import type { Db } from '../../src/db/types.js'
import { newId } from '../../src/lib/ids.js'
import { presentAuthorization } from '../../src/modules/authorizations/present.js'
import * as repo from '../../src/modules/authorizations/repo.js'
import { eventsFor } from '../helpers/api.js'
import type { TestApp, TestClient } from '../helpers/app.js'
import { withTenant } from '../helpers/tenant.js'
import { authorizeRaw, balances, fundedCard, post, secondCard, type Funded } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string
withTenant((fixture) => ({ t, tenant, token } = fixture))

async function fire(cardIds: string[], count: number, amount: number): Promise<any[]> {
  const responses = await Promise.all(
    Array.from({ length: count }, (_, i) =>
      authorizeRaw(t, token, cardIds[i % cardIds.length], amount),
    ),
  )
  for (const res of responses) assert.equal(res.statusCode, 201, res.body)
  return responses.map((r) => r.json())
}

test('100 simultaneous authorizations on one account whose balance covers exactly 37 approve exactly 37', async () => {
  const f = await fundedCard(t, tenant, token, 3700)
  const cards = [f.card.id, (await secondCard(t, token, f)).id, (await secondCard(t, token, f)).id]
  const results = await fire(cards, 100, 100)
  const approved = results.filter((a) => a.approved)
  assert.equal(approved.length, 37)
  assert.ok(
    results
      .filter((a) => !a.approved)
      .every((a) => a.status === 'declined' && a.decline_reason === 'insufficient_funds'),
  )
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 3700,
    held: 3700,
    available: 0,
  })
  const holds = await t.deps.db
    .selectFrom('ledger_entries')
    .select(['amount', 'available_balance_after'])
    .where('account_id', '=', f.account.id)
    .where('type', '=', 'hold')
    .orderBy('seq')
    .execute()
  assert.equal(holds.length, 37)
  assert.ok(
    holds.every((h) => Number(h.available_balance_after) >= 0),
    'the available balance never went below zero',
  )
  assert.deepEqual(
    holds.map((h) => Number(h.available_balance_after)),
    Array.from({ length: 37 }, (_, i) => 3600 - i * 100),
  )
})

test('simultaneous authorizations against a daily limit approve exactly what the limit covers', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000, {
    spending_controls: { spending_limits: [{ amount: 1000, interval: 'daily' }] },
  })
  const results = await fire([f.card.id], 30, 100)
  assert.equal(results.filter((a) => a.approved).length, 10)
  assert.ok(results.filter((a) => !a.approved).every((a) => a.decline_reason === 'spending_limit'))
  assert.equal((await balances(t, token, f.account.id)).held, 1000)
})

// The guard under decisions written without a transaction: an account's decisions are written only while the
// account and their cards are still the versions the decisions read; otherwise nothing of that account is.

const readFacts = async (f: Funded, db: Db = t.deps.db, lock = false) =>
  (await repo.readDecisionFacts(db, [f.card.id], lock)).get(f.card.id)!

/** The write of an authorization decided on `facts` (approved unless `declined` names a reason), as the engine makes it. */
function decisionWrite(
  f: Funded,
  facts: repo.DecisionFacts,
  amount: number,
  declined: string | null = null,
): repo.DecisionWrite {
  const now = new Date()
  const approved = declined === null
  const row: repo.AuthorizationRow = {
    id: newId('auth'),
    organization_id: facts.card.organization_id,
    environment: facts.card.environment,
    program_id: facts.card.program_id,
    card_id: facts.card.id,
    account_id: facts.account.id,
    network_token_id: null,
    status: approved ? 'pending' : 'declined',
    approved,
    amount,
    held_amount: approved ? amount : 0,
    captured_amount: 0,
    reversed_amount: 0,
    currency: 'USD',
    merchant_amount: amount,
    merchant_currency: 'USD',
    fx: null,
    merchant: { name: 'Corner Cafe', mcc: null, city: null, country: null },
    decline_reason: declined,
    rule_id: null,
    rule_results: [],
    rule_counters: [],
    hold_id: approved ? newId('hold') : null,
    request_history: [
      {
        type: 'authorization',
        amount,
        approved,
        decline_reason: declined,
        created_at: now.toISOString(),
      },
    ],
    decision: { source: 'svc', latency_ms: 0 },
    expires_at: approved ? new Date(now.getTime() + 86_400_000) : null,
    created_at: now,
    updated_at: now,
  }
  return {
    row,
    view: presentAuthorization(row),
    eventId: newId('evt'),
    entryId: approved ? newId('le') : null,
    versions: facts.versions,
    operationId: null,
    answer: null,
  }
}

/** Writes one approval of `amount` decided on `facts`; `written` says whether it was. */
async function approve(f: Funded, facts: repo.DecisionFacts, amount: number, db: Db = t.deps.db) {
  const w = decisionWrite(f, facts, amount)
  const { stale } = await repo.recordDecisions(db, [w], new Date())
  return { written: !stale.has(f.account.id), id: w.row.id }
}

async function nothingWritten(f: Funded, id: string, balance: number): Promise<void> {
  assert.equal(
    await t.deps.db
      .selectFrom('authorizations')
      .select('id')
      .where('id', '=', id)
      .executeTakeFirst(),
    undefined,
  )
  assert.equal(
    (
      await t.deps.db
        .selectFrom('holds')
        .select('id')
        .where('account_id', '=', f.account.id)
        .execute()
    ).length,
    0,
  )
  assert.deepEqual(await eventsFor(t, id), [])
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: balance,
    held: 0,
    available: balance,
  })
}

test('an approval decided before the account changed writes nothing; decided again on a fresh read, it holds', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const stale = await readFacts(f)
  await post(t, token, `/v1/accounts/${f.account.id}/credit`, { amount: 1 })
  const lost = await approve(f, stale, 500)
  assert.equal(lost.written, false)
  await nothingWritten(f, lost.id, 1001)

  const fresh = await readFacts(f)
  assert.notEqual(fresh.versions.account, stale.versions.account)
  assert.equal(fresh.versions.card, stale.versions.card)
  const won = await approve(f, fresh, 500)
  assert.equal(won.written, true)
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 1001,
    held: 500,
    available: 501,
  })
  assert.deepEqual(
    (await eventsFor(t, won.id)).map((e) => e.type),
    ['authorization.created'],
  )
  // The read it was decided on is now stale too: a second approval on it writes nothing.
  assert.equal((await approve(f, fresh, 1)).written, false)
})

test('an approval decided before its card was frozen writes nothing', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const stale = await readFacts(f)
  await post(t, token, `/v1/cards/${f.card.id}/freeze`)
  const lost = await approve(f, stale, 500)
  assert.equal(lost.written, false)
  await nothingWritten(f, lost.id, 1000)
})

test('approvals the balance no longer covers write nothing, whatever versions they carry', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const facts = await readFacts(f)
  const lost = await approve(f, facts, 1001)
  assert.equal(lost.written, false)
  await nothingWritten(f, lost.id, 1000)
  // Together they ask for more than the account has: none of them is written.
  const pair = [decisionWrite(f, facts, 600), decisionWrite(f, facts, 600)]
  assert.deepEqual(
    [...(await repo.recordDecisions(t.deps.db, pair, new Date())).stale],
    [f.account.id],
  )
  await nothingWritten(f, pair[0].row.id, 1000)
})

test("one statement writes several accounts' decisions: each account's holds in order with running balances; a changed account writes none of its own", async () => {
  const [a, b] = await Promise.all([
    fundedCard(t, tenant, token, 1000),
    fundedCard(t, tenant, token, 1000),
  ])
  const [factsA, factsB] = [await readFacts(a), await readFacts(b)]
  await post(t, token, `/v1/accounts/${b.account.id}/credit`, { amount: 5 }) // b changes after its read
  const writes = [
    decisionWrite(a, factsA, 300),
    decisionWrite(b, factsB, 100),
    decisionWrite(a, factsA, 50, 'mcc_blocked'),
    decisionWrite(a, factsA, 700),
    decisionWrite(b, factsB, 100, 'card_frozen'),
  ]
  const { stale } = await repo.recordDecisions(t.deps.db, writes, new Date())
  assert.deepEqual([...stale], [b.account.id])
  assert.deepEqual(await balances(t, token, a.account.id), {
    ledger: 1000,
    held: 1000,
    available: 0,
  })
  const holds = await t.deps.db
    .selectFrom('ledger_entries')
    .select(['amount', 'held_balance_after', 'available_balance_after', 'source_id', 'seq'])
    .where('account_id', '=', a.account.id)
    .where('type', '=', 'hold')
    .orderBy('seq')
    .execute()
  assert.deepEqual(
    holds.map((h) => [
      Number(h.amount),
      Number(h.held_balance_after),
      Number(h.available_balance_after),
      h.source_id,
      Number(h.seq),
    ]),
    [
      [-300, 300, 700, writes[0].row.id, 2],
      [-700, 1000, 0, writes[3].row.id, 3],
    ],
  )
  const stored = await t.deps.db
    .selectFrom('authorizations')
    .select(['id', 'status', 'decline_reason', 'held_amount'])
    .where(
      'id',
      'in',
      writes.map((w) => w.row.id),
    )
    .orderBy('id')
    .execute()
  assert.deepEqual(
    stored.map((r) => [r.id, r.status, r.decline_reason, Number(r.held_amount)]).sort(),
    [
      [writes[0].row.id, 'pending', null, 300],
      [writes[2].row.id, 'declined', 'mcc_blocked', 0],
      [writes[3].row.id, 'pending', null, 700],
    ].sort(),
  )
  for (const w of [writes[0], writes[2], writes[3]])
    assert.deepEqual(
      (await eventsFor(t, w.row.id)).map((e) => e.type),
      ['authorization.created'],
    )
  await nothingWritten(b, writes[1].row.id, 1005)
  assert.deepEqual(await eventsFor(t, writes[4].row.id), [])
})

test("under the account's row lock (the path a contended account falls back to) the read and the write go together", async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const written = await withTx(t.deps.db, async (trx) => {
    const locked = await readFacts(f, trx, true)
    assert.equal(locked.account.status, 'open')
    return approve(f, locked, 400, trx)
  })
  assert.equal(written.written, true)
  assert.deepEqual(await balances(t, token, f.account.id), {
    ledger: 1000,
    held: 400,
    available: 600,
  })
})
