import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import type { TestApp, TestClient } from '../helpers/app.js'
import { cardBody, issuedCard, makeAccount, makeCardholder } from '../cards/support.js'
import { ledgerEntries } from '../accounts/support.js'

export { eventsFor, expectError } from '../helpers/api.js'
export { runJobs } from '../cards/support.js'

export const MERCHANT = { name: 'Corner Cafe', mcc: '5814', city: 'Springfield', country: 'USA' }

export interface Funded {
  holder: any
  account: any
  card: any
}

/** A cardholder with a USD account on the sim_full program credited with `balance`, and an active virtual card on it. */
export async function fundedCard(
  t: TestApp,
  tenant: TestClient,
  token: string,
  balance: number,
  cardOverrides: Record<string, unknown> = {},
): Promise<Funded> {
  const holder = await makeCardholder(t, token)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  if (balance > 0) {
    const res = await t.api(token, 'POST', `/v1/accounts/${account.id}/credit`, { amount: balance })
    assert.equal(res.statusCode, 200, res.body)
  }
  const card = await issuedCard(t, token, cardBody(holder.id, account.id, cardOverrides))
  return { holder, account, card }
}

/** Another active card on the same account. */
export async function secondCard(
  t: TestApp,
  token: string,
  f: Funded,
  overrides: Record<string, unknown> = {},
): Promise<any> {
  return issuedCard(t, token, cardBody(f.holder.id, f.account.id, overrides))
}

export function authorizeRaw(
  t: TestApp,
  token: string,
  cardId: string,
  amount: number,
  extra: Record<string, unknown> = {},
): Promise<LightMyRequestResponse> {
  return t.api(token, 'POST', '/v1/simulate/authorizations', {
    card_id: cardId,
    amount,
    currency: 'USD',
    merchant: MERCHANT,
    ...extra,
  })
}

/** Simulates an authorization and returns it (approved or declined); fails unless the answer is 201. */
export async function authorize(
  t: TestApp,
  token: string,
  cardId: string,
  amount: number,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const res = await authorizeRaw(t, token, cardId, amount, extra)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** Asserts a declined authorization with this reason, holding nothing. */
export async function expectDecline(
  t: TestApp,
  token: string,
  cardId: string,
  amount: number,
  reason: string,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const auth = await authorize(t, token, cardId, amount, extra)
  assert.equal(auth.status, 'declined', JSON.stringify(auth))
  assert.equal(auth.approved, false)
  assert.equal(auth.decline_reason, reason, JSON.stringify(auth))
  assert.equal(auth.held_amount, 0)
  assert.equal(auth.expires_at, null)
  return auth
}

export async function expectApproved(
  t: TestApp,
  token: string,
  cardId: string,
  amount: number,
  extra: Record<string, unknown> = {},
): Promise<any> {
  const auth = await authorize(t, token, cardId, amount, extra)
  assert.equal(auth.status, 'pending', JSON.stringify(auth))
  assert.equal(auth.approved, true)
  assert.equal(auth.decline_reason, null)
  assert.equal(auth.held_amount, amount)
  return auth
}

/** Ledger, held and available balances of the account, as the API shows them. */
export async function balances(
  t: TestApp,
  token: string,
  accountId: string,
): Promise<{ ledger: number; held: number; available: number }> {
  const res = await t.api(token, 'GET', `/v1/accounts/${accountId}`)
  assert.equal(res.statusCode, 200, res.body)
  const a = res.json()
  assert.equal(a.available_balance, a.ledger_balance - a.held_balance)
  return { ledger: a.ledger_balance, held: a.held_balance, available: a.available_balance }
}

/** The account's ledger entries, oldest first, as [type, amount] pairs (credits left out). */
export async function entries(
  t: TestApp,
  token: string,
  accountId: string,
): Promise<[string, number][]> {
  return (await ledgerEntries(t, token, accountId))
    .filter((e) => e.type !== 'credit')
    .map((e) => [e.type, e.amount])
}

export async function post(
  t: TestApp,
  token: string,
  url: string,
  body?: unknown,
  status = 200,
): Promise<any> {
  const res = await t.api(token, 'POST', url, body)
  assert.equal(res.statusCode, status, res.body)
  return res.json()
}
