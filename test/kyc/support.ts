import type { RequestCtx } from '../../src/http/context.js'
import type { TestApp, TestClient } from '../helpers/app.js'

export const PDF = Buffer.from('%PDF-1.4\n% a tiny test document\n')

/** A valid attestation body, verified a minute ago on the app's clock; fields can be overridden or (undefined) removed. */
export function attestationBody(
  t: TestApp,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const body: Record<string, unknown> = {
    status: 'approved',
    provider: 'onfido',
    verified_at: new Date(t.clock.now().getTime() - 60_000).toISOString(),
    provider_reference: 'chk_123',
    method: 'document',
    reference: 'kyc-run-1',
    ...overrides,
  }
  for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k]
  return body
}

export function documentInput(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    kind: 'passport',
    file_name: 'passport.pdf',
    content_type: 'application/pdf',
    content: PDF.toString('base64'),
    ...overrides,
  }
}

export const IDENTITY = {
  legal_name: 'Ada King Lovelace',
  gender: 'female',
  nationality: 'GBR',
  country_of_birth: 'GBR',
  document_expires_on: '2031-05-01',
}

/** The request context services see for this tenant. */
export function ctxOf(client: TestClient): RequestCtx {
  return {
    requestId: 'req_test',
    organizationId: client.organizationId,
    environment: client.environment,
    clientId: client.clientId,
    scopes: new Set(),
  }
}
