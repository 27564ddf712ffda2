import { createServer } from 'node:net'
import { Svc, type SvcConfig } from '../../sdk/src/index.js'
import { SCOPES } from '../../src/modules/oauth/scopes.js'
import { newKeyPair, startTestApp, type TestApp, type TestAppOptions } from '../helpers/app.js'

/** A port nothing listens on yet. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number }
      probe.close(() => resolve(port))
    })
  })
}

/** The real application listening on 127.0.0.1, its BASE_URL the address it listens on (the SDK signs for that token URL). */
export async function startListeningApp(
  options: TestAppOptions = {},
): Promise<{ t: TestApp; baseUrl: string }> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const t = await startTestApp({ ...options, env: { BASE_URL: baseUrl, ...options.env } })
  await t.app.listen({ port, host: '127.0.0.1' })
  return { t, baseUrl }
}

export interface SdkTenant {
  organizationId: string
  clientId: string
  privateJwk: Record<string, unknown>
  programs: { full: any; basic: any }
  /** An SDK client of this tenant; `config` overrides (baseUrl, clock, fetch, retries, …). */
  svc(config?: Partial<SvcConfig>): Svc
}

/** An organization with both simulated programs in sandbox and a client holding every scope (ES256 unless told). */
export async function sdkTenant(
  t: TestApp,
  baseUrl: string,
  alg: 'ES256' | 'RS256' = 'ES256',
): Promise<SdkTenant> {
  const org = await t.operator('POST', '/operator/v1/organizations', { name: 'SDK org' })
  const full = await t.operator('POST', '/operator/v1/programs', {
    organization_id: org.id,
    environment: 'sandbox',
    name: 'Full',
    processor: 'sim_full',
    currencies: ['USD', 'EUR'],
  })
  const basic = await t.operator('POST', '/operator/v1/programs', {
    organization_id: org.id,
    environment: 'sandbox',
    name: 'Basic',
    processor: 'sim_basic',
    currencies: ['USD'],
  })
  const keys = await newKeyPair(alg)
  const client = await t.operator('POST', '/operator/v1/clients', {
    organization_id: org.id,
    environment: 'sandbox',
    label: 'sdk',
    scopes: [...SCOPES],
    jwks: { keys: [keys.publicJwk] },
  })
  return {
    organizationId: org.id,
    clientId: client.id,
    privateJwk: keys.privateJwk,
    programs: { full, basic },
    svc: (config = {}) =>
      new Svc({ clientId: client.id, privateKey: keys.privateJwk, baseUrl, ...config }),
  }
}

export const MERCHANT = { name: 'Corner Cafe', mcc: '5814', city: 'Springfield', country: 'USA' }
export const ADDRESS = {
  line1: '1 Main St',
  city: 'Springfield',
  postal_code: '12345',
  country: 'USA',
}
export const DELIVERY = {
  name: 'Ada Lovelace',
  line1: '1 Main St',
  city: 'Springfield',
  postal_code: '12345',
  country: 'USA',
}

let counter = 0
export const uniqueEmail = (label = 'sdk') =>
  `${label}.${process.pid}.${++counter}.${Date.now()}@example.com`

/** A cardholder with approved KYC, a USD account of the full program credited with `amount`, and an active virtual card on it. */
export async function fundedCard(
  svc: Svc,
  programId: string,
  amount = 10_000,
): Promise<{ cardId: string; accountId: string }> {
  const cardholder = await svc.cardholders.create({
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: uniqueEmail('funded'),
    address: ADDRESS,
    identity_document: { type: 'passport', number: 'P2000222' },
  })
  await svc.kyc.create(cardholder.id, {
    status: 'approved',
    provider: 'acme-kyc',
    verified_at: new Date(Date.now() - 60_000).toISOString(),
  })
  const account = await svc.accounts.create({
    program_id: programId,
    cardholder_id: cardholder.id,
    currency: 'USD',
  })
  await svc.accounts.credit(account.id, { amount })
  const card = await svc.cards.create({
    cardholder_id: cardholder.id,
    account_id: account.id,
    form_factor: 'virtual',
    card_type: 'prepaid',
    embossed_name: 'ADA LOVELACE',
    delivery_address: DELIVERY,
  })
  await svc.simulate.cards.issue(card.id)
  return { cardId: card.id, accountId: account.id }
}
