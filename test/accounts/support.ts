import assert from 'node:assert/strict'
import type { TestApp } from '../helpers/app.js'

export { eventsOf, expectError } from '../helpers/api.js'
export { approvedCardholder } from '../helpers/tenant.js'

/** Opens an account and returns it; fails the test unless the answer is 201. */
export async function openAccount(
  t: TestApp,
  token: string,
  program: { id: string },
  cardholderId: string,
  currency = 'USD',
): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/accounts', {
    program_id: program.id,
    cardholder_id: cardholderId,
    currency,
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** The account's ledger entries, oldest first (up to 100). */
export async function ledgerEntries(t: TestApp, token: string, accountId: string): Promise<any[]> {
  const res = await t.api(token, 'GET', `/v1/accounts/${accountId}/entries?limit=100`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json().data.reverse()
}
