import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { createTenant, startTestApp, type TestApp, type TestClient } from '../helpers/app.js'
import { authorizeRaw, balances, fundedCard, secondCard } from './support.js'

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
