import assert from 'node:assert/strict'
import type { LightMyRequestResponse } from 'fastify'
import { SignJWT } from 'jose'
import { signClientAssertion } from '../../src/lib/client-assertion.js'
import { GENERIC_CLIENT_FAILURE } from '../../src/modules/oauth/oauth-error.js'
import { TOKEN_URL, requestToken, type TestApp, type TestClient } from '../helpers/app.js'

export const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'

/** Seconds since the epoch on the app's (movable) clock. */
export function nowSeconds(t: TestApp): number {
  return Math.floor(t.clock.now().getTime() / 1000)
}

/** An assertion for the tenant's client, signed with its key; claims and header pieces can be overridden. */
export function assertionFor(
  t: TestApp,
  client: Pick<TestClient, 'clientId' | 'privateJwk'>,
  options: {
    claims?: Record<string, unknown>
    kid?: string | null
    audience?: string
    lifetimeSeconds?: number
    privateJwk?: Record<string, unknown>
  } = {},
): Promise<string> {
  return signClientAssertion({
    clientId: client.clientId,
    privateJwk: options.privateJwk ?? client.privateJwk,
    audience: options.audience ?? TOKEN_URL,
    kid: options.kid,
    lifetimeSeconds: options.lifetimeSeconds,
    claims: options.claims,
    nowSeconds: nowSeconds(t),
  })
}

/** A complete client_credentials form around an assertion, with fields added, replaced or (undefined) removed. */
export function tokenForm(
  assertion: string,
  fields: Record<string, string | undefined> = {},
): string {
  const base: Record<string, string | undefined> = {
    grant_type: 'client_credentials',
    client_assertion_type: ASSERTION_TYPE,
    client_assertion: assertion,
    ...fields,
  }
  const form = new URLSearchParams()
  for (const [k, v] of Object.entries(base)) if (v !== undefined) form.set(k, v)
  return form.toString()
}

/** Posts a token request for the client, optionally with extra form fields and headers. */
export async function tokenFor(
  t: TestApp,
  client: Pick<TestClient, 'clientId' | 'privateJwk'>,
  fields: Record<string, string | undefined> = {},
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  return requestToken(t, tokenForm(await assertionFor(t, client), fields), headers)
}

/** Checks the flat RFC 6749 refusal: status, `{error, error_description}` only, and `Cache-Control: no-store`. */
export function assertOAuthError(
  res: LightMyRequestResponse,
  status: number,
  error: string,
): string {
  assert.equal(res.statusCode, status, res.body)
  assert.equal(res.headers['cache-control'], 'no-store')
  const body = res.json()
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description'])
  assert.equal(body.error, error)
  assert.equal(typeof body.error_description, 'string')
  return body.error_description
}

/** `401 invalid_client` with the one generic description that reveals nothing about the cause. */
export function assertGenericRefusal(res: LightMyRequestResponse): void {
  assert.equal(assertOAuthError(res, 401, 'invalid_client'), GENERIC_CLIENT_FAILURE)
}

/** A JWT signed with an arbitrary header (HS256 with a guessable secret, or `alg: none`). */
export async function forgedAssertion(
  clientId: string,
  alg: 'none' | 'HS256' | 'HS512' | 'ES384' | 'PS256',
  secret = 'secret',
): Promise<string> {
  const now = Math.floor(Date.now() / 1000)
  const claims = {
    iss: clientId,
    sub: clientId,
    aud: TOKEN_URL,
    iat: now,
    exp: now + 60,
    jti: crypto.randomUUID(),
  }
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url')
  if (alg === 'HS256' || alg === 'HS512') {
    return new SignJWT(claims).setProtectedHeader({ alg }).sign(new TextEncoder().encode(secret))
  }
  // alg none, or an algorithm the endpoint refuses whose signature is junk: the header alone must be enough to refuse.
  const signature = alg === 'none' ? '' : Buffer.from('not a signature').toString('base64url')
  return `${b64({ alg, typ: 'JWT' })}.${b64(claims)}.${signature}`
}
