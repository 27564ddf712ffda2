import { randomUUID } from 'node:crypto'
import { SignJWT, importJWK } from 'jose'

export interface AssertionInput {
  clientId: string
  privateJwk: Record<string, unknown>
  audience: string
  alg?: 'ES256' | 'RS256'
  kid?: string | null
  lifetimeSeconds?: number
  /** Overrides for tests of refusals (iat, exp, jti, …). */
  claims?: Record<string, unknown>
  nowSeconds?: number
}

/** Signs a private_key_jwt client assertion for POST /oauth/token (RFC 7523). */
export async function signClientAssertion(input: AssertionInput): Promise<string> {
  const alg = input.alg ?? (input.privateJwk.kty === 'RSA' ? 'RS256' : 'ES256')
  const key = await importJWK(input.privateJwk as never, alg)
  const now = input.nowSeconds ?? Math.floor(Date.now() / 1000)
  const kid =
    input.kid === undefined
      ? (input.privateJwk.kid as string | undefined)
      : (input.kid ?? undefined)
  const header: Record<string, unknown> = { alg, typ: 'JWT' }
  if (kid) header.kid = kid
  return new SignJWT({
    iss: input.clientId,
    sub: input.clientId,
    aud: input.audience,
    iat: now,
    exp: now + (input.lifetimeSeconds ?? 60),
    jti: randomUUID(),
    ...input.claims,
  })
    .setProtectedHeader(header as never)
    .sign(key)
}

/** The form body of a token request. */
export function tokenRequestBody(assertion: string, scope?: string): string {
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
    client_assertion: assertion,
  })
  if (scope) form.set('scope', scope)
  return form.toString()
}
