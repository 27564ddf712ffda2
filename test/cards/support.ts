import assert from 'node:assert/strict'
import { constants, publicEncrypt } from 'node:crypto'
import { JobRunner } from '../../src/jobs/runner.js'
import type { TestApp } from '../helpers/app.js'

export { eventsFor, expectError } from '../helpers/api.js'

let counter = 0

export interface CardholderOptions {
  identityDocument?: boolean
  address?: boolean
  /** `none`: no attestation at all. */
  kyc?: 'approved' | 'pending' | 'none'
  /** Identity evidence on the attestation (sim_basic runs its own identity check). */
  identity?: boolean
}

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

/** A cardholder with (by default) an identity document, an address and approved KYC carrying identity. */
export async function makeCardholder(
  t: TestApp,
  token: string,
  options: CardholderOptions = {},
): Promise<any> {
  counter++
  const res = await t.api(token, 'POST', '/v1/cardholders', {
    type: 'individual',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: `cards.${process.pid}.${counter}.${Date.now()}@example.com`,
    ...(options.address === false ? {} : { address: ADDRESS }),
    ...(options.identityDocument === false
      ? {}
      : { identity_document: { type: 'passport', number: `P${counter}000111` } }),
  })
  assert.equal(res.statusCode, 201, res.body)
  const cardholder = res.json()
  if ((options.kyc ?? 'approved') !== 'none')
    await attest(t, token, cardholder.id, options.kyc ?? 'approved', options.identity !== false)
  return cardholder
}

export async function attest(
  t: TestApp,
  token: string,
  cardholderId: string,
  status: string,
  identity: boolean,
): Promise<void> {
  const res = await t.api(token, 'POST', `/v1/cardholders/${cardholderId}/kyc`, {
    status,
    provider: 'acme-kyc',
    verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
    ...(identity ? { identity: { legal_name: 'Ada Lovelace', nationality: 'GBR' } } : {}),
  })
  assert.equal(res.statusCode, 201, res.body)
}

/** Opens an account and, by default, waits until the processor has it (sim_basic creates accounts in the background). */
export async function makeAccount(
  t: TestApp,
  token: string,
  programId: string,
  cardholderId: string,
  options: { provisioned?: boolean } = {},
): Promise<any> {
  const res = await t.api(token, 'POST', '/v1/accounts', {
    program_id: programId,
    cardholder_id: cardholderId,
    currency: 'USD',
  })
  assert.equal(res.statusCode, 201, res.body)
  let account = res.json()
  if (!account.has_upstream_reference && options.provisioned !== false) {
    await runJobs(t)
    account = (await t.api(token, 'GET', `/v1/accounts/${account.id}`)).json()
    assert.equal(account.has_upstream_reference, true)
  }
  return account
}

export function cardBody(
  cardholderId: string,
  accountId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    cardholder_id: cardholderId,
    account_id: accountId,
    form_factor: 'virtual',
    card_type: 'prepaid',
    embossed_name: 'ADA LOVELACE',
    delivery_address: DELIVERY,
    ...overrides,
  }
}

/** A card issued by the processor (through the sandbox issue call), ready for lifecycle moves. */
export async function issuedCard(
  t: TestApp,
  token: string,
  body: Record<string, unknown>,
): Promise<any> {
  const created = await t.api(token, 'POST', '/v1/cards', body)
  assert.equal(created.statusCode, 201, created.body)
  const res = await t.api(token, 'POST', `/v1/simulate/cards/${created.json().id}/issue`)
  assert.equal(res.statusCode, 200, res.body)
  return res.json()
}

const runners = new WeakMap<TestApp, JobRunner>()

/** Runs every due background job (issuance, provisioning, expiry) to the end. */
export async function runJobs(t: TestApp): Promise<number> {
  let runner = runners.get(t)
  if (!runner) {
    runner = new JobRunner(t.deps, t.jobs, { listen: false })
    runners.set(t, runner)
  }
  return runner.drain()
}

/** What a client does with a pin-key: RSA-OAEP with SHA-256 of the PIN digits, base64. */
export function encryptPin(publicKeyPem: string, pin: string): string {
  return publicEncrypt(
    { key: publicKeyPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
    Buffer.from(pin),
  ).toString('base64')
}
