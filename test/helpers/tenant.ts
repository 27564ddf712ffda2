import { after, before } from 'node:test'
import { createTenant, startTestApp, type TestApp, type TestAppOptions, type TestClient } from './app.js'

/** A test file's app and its first tenant, with a token holding every scope. */
export interface TenantFixture {
  t: TestApp
  tenant: TestClient
  token: string
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
  options: { app?: TestAppOptions; tenant?: Parameters<typeof createTenant>[1] } = {},
): void {
  let app: TestApp | undefined
  before(async () => {
    app = await startTestApp(options.app)
    const tenant = await createTenant(app, options.tenant)
    await ready({ t: app, tenant, token: await tenant.token() })
  })
  after(async () => { await app?.close() })
}
