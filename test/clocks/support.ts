import assert from 'node:assert/strict'
import type { TestApp, TestClient } from '../helpers/app.js'
import { ADDRESS, cardBody, issuedCard, makeAccount } from '../cards/support.js'
import { post } from '../authorizations/support.js'

let counter = 0

/** A sandbox clock at `frozenTime` (RFC 3339). */
export async function clockAt(t: TestApp, token: string, frozenTime: string): Promise<any> {
  return post(t, token, '/v1/simulate/clocks', { frozen_time: frozenTime }, 201)
}

export async function advance(
  t: TestApp,
  token: string,
  clockId: string,
  body: { by?: string; to?: string },
): Promise<any> {
  return post(t, token, `/v1/simulate/clocks/${clockId}/advance`, body, 200)
}

/**
 * A cardholder on `clockId` with an approved KYC, a USD account on the full program credited with `balance` and an
 * active virtual card (`cardOverrides` into its body).
 */
export async function fundedOnClock(
  t: TestApp,
  tenant: TestClient,
  token: string,
  clockId: string,
  balance: number,
  cardOverrides: Record<string, unknown> = {},
) {
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Clara',
    last_name: 'Clock',
    email: `clock.money.${process.pid}.${++counter}.${Date.now()}@example.com`,
    address: ADDRESS,
    identity_document: { type: 'passport', number: `M${counter}000333` },
    clock_id: clockId,
  })
  assert.equal(res.statusCode, 201, res.body)
  const holder = res.json()
  // Verified a minute before the clock's time: a KYC check is never in the cardholder's future.
  const clock = (await t.api(token, 'GET', `/v1/simulate/clocks/${clockId}`)).json()
  const kyc = await t.api(token, 'POST', `/v1/cardholders/${holder.id}/kyc`, {
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: new Date(new Date(clock.frozen_time).getTime() - 60_000).toISOString(),
    identity: { legal_name: 'Ada Lovelace', nationality: 'GBR' },
  })
  assert.equal(kyc.statusCode, 201, kyc.body)
  const account = await makeAccount(t, token, tenant.programs.full.id, holder.id)
  if (balance > 0)
    await post(t, token, `/v1/accounts/${account.id}/credit`, { amount: balance }, 200)
  const card = await issuedCard(t, token, cardBody(holder.id, account.id, cardOverrides))
  return { holder, account, card }
}

/** The stored events of `objectId` (of `type`, if given), oldest first, with their clock_id. */
export async function storedEvents(
  t: TestApp,
  objectId: string,
  type?: string,
): Promise<{ id: string; type: string; clock_id: string | null; object: any }[]> {
  let q = t.deps.db.selectFrom('events').select(['id', 'type', 'clock_id', 'data']).orderBy('id')
  if (type) q = q.where('type', '=', type)
  const rows = await q.execute()
  return rows
    .map((r) => {
      const data = typeof r.data === 'string' ? JSON.parse(r.data) : (r.data as any)
      return { id: r.id, type: r.type, clock_id: r.clock_id, object: data.object }
    })
    .filter((e) => e.object?.id === objectId)
}
