import assert from 'node:assert/strict'
import { after, before } from 'node:test'
import {
  createTenant,
  startTestApp,
  type TestApp,
  type TestAppOptions,
  type TestClient,
} from './app.js'

/** A test file's app and its first tenant, with a token holding every scope. */
export interface TenantFixture {
  t: TestApp
  tenant: TestClient
  token: string
}

/** What `withTenant` takes besides the callback: the app's options and the tenant's. */
export interface TenantFixtureOptions {
  app?: TestAppOptions
  tenant?: Parameters<typeof createTenant>[1]
}

/**
 * Starts the app before a file's tests and closes it after them, with a tenant ready to call the API; `ready` gets
 * them once they exist (the file keeps them in its own variables, and may prepare more there):
 *
 *     let t: TestApp, tenant: TestClient, token: string
 *     withTenant((fixture) => ({ t, tenant, token } = fixture))
 */
export function withTenant(
  ready: (fixture: TenantFixture) => unknown,
  options: TenantFixtureOptions = {},
): void {
  let app: TestApp | undefined
  before(async () => {
    app = await startTestApp(options.app)
    const tenant = await createTenant(app, options.tenant)
    await ready({ t: app, tenant, token: await tenant.token() })
  })
  after(async () => {
    await app?.close()
  })
}

/** `withTenant`'s fixture and a cardholder of the tenant whose KYC is approved. */
export interface CardholderFixture extends TenantFixture {
  cardholder: any
}

/**
 * `withTenant`, with a cardholder whose KYC is approved (`approvedCardholder`), ready to open accounts on either of
 * the tenant's programs:
 *
 *     let t: TestApp, tenant: TestClient, token: string, cardholder: any
 *     withApprovedCardholder((fixture) => ({ t, tenant, token, cardholder } = fixture))
 */
export function withApprovedCardholder(
  ready: (fixture: CardholderFixture) => unknown,
  options: TenantFixtureOptions = {},
): void {
  withTenant(async (fixture) => {
    await ready({ ...fixture, cardholder: await approvedCardholder(fixture.t, fixture.token) })
  }, options)
}

let counter = 0

/** A cardholder whose KYC is approved, with identity evidence (so it passes sim_basic's own check too). */
export async function approvedCardholder(
  t: TestApp,
  token: string,
  options: { identity?: boolean; status?: string } = {},
): Promise<any> {
  counter++
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `acct.${process.pid}.${counter}.${Date.now()}@example.com`,
    address: { line1: '1 Main St', city: 'Springfield', postal_code: '12345', country: 'USA' },
  })
  assert.equal(res.statusCode, 201, res.body)
  const cardholder = res.json()
  if (options.status !== 'none') {
    const kyc = await t.api(token, 'POST', `/v1/cardholders/${cardholder.id}/kyc`, {
      status: options.status ?? 'approved',
      provider: 'acme-kyc',
      verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
      ...(options.identity === false
        ? {}
        : { identity: { legal_name: 'Ada Lovelace', nationality: 'GBR' } }),
    })
    assert.equal(kyc.statusCode, 201, kyc.body)
  }
  return cardholder
}
