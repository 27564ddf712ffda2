import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import type { LightMyRequestResponse } from 'fastify'
import { iccidWithCheckDigit } from '../../src/modules/esim/iccid.js'
import { createTenant, type TestApp, type TestClient } from '../helpers/app.js'

export { eventsOf, expectError } from '../helpers/api.js'

let counter = 0

export interface EsimFixture {
  tenant: TestClient
  token: string
  cardholder: any
}

/** A sandbox tenant whose simulated network answers at once (latency 0), with one cardholder. */
export async function esimFixture(
  t: TestApp,
  options: { scopes?: string[] } = {},
): Promise<EsimFixture> {
  const tenant = await createTenant(t, options.scopes ? { scopes: options.scopes } : {})
  const token = await tenant.token()
  const sim = await t.api(token, 'POST', '/v1/simulate/esim/provisioning', { latency_ms: 0 })
  assert.equal(sim.statusCode, 200, sim.body)
  return { tenant, token, cardholder: await newCardholder(t, token) }
}

export async function newCardholder(t: TestApp, token: string, country = 'FRA'): Promise<any> {
  counter++
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `esim.${process.pid}.${counter}.${Date.now()}@example.com`,
    address: { line1: '1 Rue de Rivoli', city: 'Paris', postal_code: '75001', country },
  })
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** A package of the seeded catalogue that is on sale for this caller. */
export async function packageFor(
  t: TestApp,
  token: string,
  query = 'country=FRA&region=local&status=on_sale',
  minMb = 1,
): Promise<any> {
  const res = await t.api(token, 'GET', `/v1/esim/packages?${query}`)
  assert.equal(res.statusCode, 200, res.body)
  const pkg = res.json().data.find((p: any) => p.data_mb !== null && p.data_mb >= minMb)
  assert.ok(pkg, `no package for ${query}`)
  return pkg
}

export function reference(label = 'ord'): string {
  return `${label}-${randomBytes(6).toString('hex')}`
}

export async function order(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  return t.api(token, 'POST', '/v1/esim/orders', { reference: reference(), ...body })
}

/** Orders a package and returns the completed order; fails the test otherwise. */
export async function completedOrder(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
): Promise<any> {
  const res = await order(t, token, body)
  assert.equal(res.statusCode, 201, res.body)
  return res.json()
}

/** Fresh valid blank profiles for the operator's inventory endpoint. */
export function blankProfiles(
  n: number,
): { iccid: string; smdp_address: string; matching_id: string }[] {
  return Array.from({ length: n }, () => {
    const serial = Array.from(randomBytes(11), (b) => String(b % 10)).join('')
    return {
      iccid: iccidWithCheckDigit(`8944500${serial}`),
      smdp_address: 'smdp.test.example',
      matching_id: randomBytes(8).toString('hex').toUpperCase(),
    }
  })
}

export async function availableProfiles(t: TestApp): Promise<number> {
  return (await t.operator('GET', '/operator/v1/esim/inventory')).available
}

/** A funded sim_full account of the cardholder (credit is mounted there). */
export async function fundedAccount(
  t: TestApp,
  fx: EsimFixture,
  amount: number,
  currency = 'USD',
): Promise<any> {
  const kyc = await t.api(fx.token, 'POST', `/v1/cardholders/${fx.cardholder.id}/kyc`, {
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
  })
  assert.equal(kyc.statusCode, 201, kyc.body)
  const res = await t.api(fx.token, 'POST', '/v1/accounts', {
    program_id: fx.tenant.programs.full.id,
    cardholder_id: fx.cardholder.id,
    currency,
  })
  assert.equal(res.statusCode, 201, res.body)
  const account = res.json()
  if (amount > 0) {
    const credit = await t.api(fx.token, 'POST', `/v1/accounts/${account.id}/credit`, { amount })
    assert.equal(credit.statusCode, 200, credit.body)
  }
  return account
}
