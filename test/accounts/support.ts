import assert from 'node:assert/strict'
import type { TestApp, TestClient } from '../helpers/app.js'

export { eventsOf, expectError } from '../helpers/api.js'

let counter = 0

/** A cardholder whose KYC is approved, with identity evidence (so it passes sim_basic's own check too). */
export async function approvedCardholder(t: TestApp, token: string, options: { identity?: boolean; status?: string } = {}): Promise<any> {
  counter++
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual', first_name: 'Ada', last_name: 'Lovelace',
    email: `acct.${process.pid}.${counter}.${Date.now()}@example.com`,
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
  })
  assert.equal(res.statusCode, 201, res.body)
  const cardholder = res.json()
  if (options.status !== 'none') {
    const kyc = await t.api(token, 'POST', `/v1/cardholders/${cardholder.id}/kyc`, {
      status: options.status ?? 'approved', provider: 'acme-kyc', verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
      ...(options.identity === false ? {} : { identity: { legal_name: 'Ada Lovelace', nationality: 'GBR' } }),
    })
    assert.equal(kyc.statusCode, 201, kyc.body)
  }
  return cardholder
}

/** Opens an account and returns it; fails the test unless the answer is 201. */
export async function openAccount(t: TestApp, token: string, program: { id: string }, cardholderId: string, currency = 'USD'): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/accounts', { program_id: program.id, cardholder_id: cardholderId, currency })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** A tenant with a token and an approved cardholder, ready to open accounts. */
export async function accountsFixture(t: TestApp, tenant: TestClient): Promise<{ token: string; cardholder: any }> {
  const token = await tenant.token()
  return { token, cardholder: await approvedCardholder(t, token) }
}

/** The account's ledger entries, oldest first (up to 100). */
export async function ledgerEntries(t: TestApp, token: string, accountId: string): Promise<any[]> {
  const res = await t.api(token, 'GET', `/v1/accounts/${accountId}/entries?limit=100`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.reverse()
}
