import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { withTx } from '../../src/db/tx.js'
import type { Db } from '../../src/db/types.js'
import { newId } from '../../src/lib/ids.js'
import * as repo from '../../src/modules/authorizations/repo.js'
import { emitWithin } from '../../src/modules/events/emit.js'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { authorizeRaw, balances, eventsFor, fundedCard, post, secondCard, type Funded } from './support.js'

let t: TestApp
let tenant: TestClient
let token: string

before(async () => {
  t = await startTestApp()
  tenant = await createTenant(t)
  token = await tenant.token()
})
after(async () => { await t.close() })

async function fire(cardIds: string[], count: number, amount: number): Promise<any[]> {
  const responses = await Promise.all(Array.from({ length: count }, (_, i) => authorizeRaw(t, token, cardIds[i % cardIds.length], amount)))
  for (const res of responses) assert.equal(res.statusCode, 201, res.body)
  return responses.map((r) => r.json())
}

test('100 simultaneous authorizations on one account whose balance covers exactly 37 approve exactly 37', async () => {
  const f = await fundedCard(t, tenant, token, 3700)
  const cards = [f.card.id, (await secondCard(t, token, f)).id, (await secondCard(t, token, f)).id]
  const results = await fire(cards, 100, 100)
  const approved = results.filter((a) => a.approved)
  assert.equal(approved.length, 37)
  assert.ok(results.filter((a) => !a.approved).every((a) => a.status === 'declined' && a.decline_reason === 'insufficient_funds'))
  assert.deepEqual(await balances(t, token, f.account.id), { ledger: 3700, held: 3700, available: 0 })
  const holds = await t.deps.db.selectFrom('ledger_entries').select(['amount', 'available_balance_after'])
    .where('account_id', '=', f.account.id).where('type', '=', 'hold').orderBy('seq').execute()
  assert.equal(holds.length, 37)
  assert.ok(holds.every((h) => Number(h.available_balance_after) >= 0), 'the available balance never went below zero')
  assert.deepEqual(holds.map((h) => Number(h.available_balance_after)), Array.from({ length: 37 }, (_, i) => 3600 - i * 100))
})

test('simultaneous authorizations against a daily limit approve exactly what the limit covers', async () => {
  const f = await fundedCard(t, tenant, token, 1_000_000, { spending_controls: { spending_limits: [{ amount: 1000, interval: 'daily' }] } })
  const results = await fire([f.card.id], 30, 100)
  assert.equal(results.filter((a) => a.approved).length, 10)
  assert.ok(results.filter((a) => !a.approved).every((a) => a.decline_reason === 'spending_limit'))
  assert.equal((await balances(t, token, f.account.id)).held, 1000)
})

// The guard under an authorization written without a transaction: an approval places its hold only while the
// card and account rows are still the versions its decision read; otherwise nothing at all is written.

/** Writes an approval of `amount` decided on `facts`, as the engine does. */
function approve(f: Funded, facts: repo.DecisionFacts, amount: number, db: Db = t.deps.db) {
  const now = new Date()
  const row: repo.AuthorizationRow = {
    id: newId('auth'), organization_id: facts.card.organization_id, environment: facts.card.environment, program_id: facts.card.program_id,
    card_id: f.card.id, account_id: f.account.id, network_token_id: null, status: 'pending', approved: true,
    amount, held_amount: amount, captured_amount: 0, reversed_amount: 0, currency: 'USD',
    merchant: { name: 'Corner Cafe', mcc: null, city: null, country: null }, decline_reason: null, hold_id: newId('hold'),
    request_history: [{ type: 'authorization', amount, approved: true, decline_reason: null, created_at: now.toISOString() }],
    expires_at: new Date(now.getTime() + 86_400_000), created_at: now, updated_at: now,
  }
  const scope = { organizationId: row.organization_id, environment: row.environment }
  return repo.recordDecision(db, {
    row, hold: { entryId: newId('le'), versions: facts.versions }, outcome: null,
    event: emitWithin(scope, 'authorization.created', 'auth', sql`${JSON.stringify({ id: row.id })}::json`, now),
  }).then((written) => ({ ...written, id: row.id }))
}

async function nothingWritten(f: Funded, id: string, balance: number): Promise<void> {
  assert.equal(await t.deps.db.selectFrom('authorizations').select('id').where('id', '=', id).executeTakeFirst(), undefined)
  assert.equal((await t.deps.db.selectFrom('holds').select('id').where('account_id', '=', f.account.id).execute()).length, 0)
  assert.deepEqual(await eventsFor(t, id), [])
  assert.deepEqual(await balances(t, token, f.account.id), { ledger: balance, held: 0, available: balance })
}

test('an approval decided before the account changed writes nothing; decided again on a fresh read, it holds', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const stale = (await repo.readCardAndAccount(t.deps.db, f.card.id, false))!
  await post(t, token, `/v1/accounts/${f.account.id}/credit`, { amount: 1 })
  const lost = await approve(f, stale, 500)
  assert.equal(lost.written, false)
  await nothingWritten(f, lost.id, 1001)

  const fresh = (await repo.readCardAndAccount(t.deps.db, f.card.id, false))!
  assert.notEqual(fresh.versions.account, stale.versions.account)
  assert.equal(fresh.versions.card, stale.versions.card)
  const won = await approve(f, fresh, 500)
  assert.equal(won.written, true)
  assert.deepEqual(await balances(t, token, f.account.id), { ledger: 1001, held: 500, available: 501 })
  assert.deepEqual((await eventsFor(t, won.id)).map((e) => e.type), ['authorization.created'])
  // The read it was decided on is now stale too: a second approval on it writes nothing.
  assert.equal((await approve(f, fresh, 1)).written, false)
})

test('an approval decided before its card was frozen writes nothing', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const stale = (await repo.readCardAndAccount(t.deps.db, f.card.id, false))!
  await post(t, token, `/v1/cards/${f.card.id}/freeze`)
  const lost = await approve(f, stale, 500)
  assert.equal(lost.written, false)
  await nothingWritten(f, lost.id, 1000)
})

test('an approval the balance no longer covers writes nothing, whatever versions it carries', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const facts = (await repo.readCardAndAccount(t.deps.db, f.card.id, false))!
  const lost = await approve(f, facts, 1001)
  assert.equal(lost.written, false)
  await nothingWritten(f, lost.id, 1000)
})

test('under the account\'s row lock (the path a contended account falls back to) the read and the write go together', async () => {
  const f = await fundedCard(t, tenant, token, 1000)
  const written = await withTx(t.deps.db, async (trx) => {
    const locked = (await repo.readCardAndAccount(trx, f.card.id, true))!
    assert.equal(locked.account.status, 'open')
    return approve(f, locked, 400, trx)
  })
  assert.equal(written.written, true)
  assert.deepEqual(await balances(t, token, f.account.id), { ledger: 1000, held: 400, available: 600 })
})
