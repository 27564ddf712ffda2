import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWTPayload } from 'jose'
import type { AppDeps } from '../../app-deps.js'
import type { Environment } from '../../config.js'
import { TOKEN_PREFIX } from '../../http/auth.js'
import { ipAllowed } from '../../http/ip.js'
import { randomBase62, sha256Hex } from '../../lib/crypto.js'
import { GENERIC_CLIENT_FAILURE, OAuthError } from './oauth-error.js'
import { findClientForGrant, insertAccessToken, redeemJti } from './repo.js'
import { isScope, scopeIssuable } from './scopes.js'

export const ACCESS_TOKEN_TTL_SECONDS = 900
export const ASSERTION_MAX_LIFETIME_SECONDS = 300
export const CLOCK_TOLERANCE_SECONDS = 60
export const CLIENT_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer'
const ALLOWED_ALGS = new Set(['ES256', 'RS256'])

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  scope: string
}

const generic = () => new OAuthError('invalid_client', GENERIC_CLIENT_FAILURE)

function keyFitsAlg(jwk: Record<string, unknown>, alg: string): boolean {
  if (jwk.alg !== undefined && jwk.alg !== alg) return false
  return alg === 'ES256' ? jwk.kty === 'EC' : jwk.kty === 'RSA'
}

async function signatureVerifies(jwt: string, jwk: Record<string, unknown>, alg: string): Promise<boolean> {
  try {
    const key = await importJWK(jwk as never, alg)
    await compactVerify(jwt, key, { algorithms: [alg] })
    return true
  } catch {
    return false
  }
}

/** Claims checked once the signature is proven: from here on a refusal may say what was wrong. */
function checkClaims(claims: JWTPayload, tokenUrl: string, nowSec: number): void {
  const audOk = typeof claims.aud === 'string' ? claims.aud === tokenUrl : Array.isArray(claims.aud) && claims.aud.includes(tokenUrl)
  if (!audOk) throw new OAuthError('invalid_client', `The assertion audience must be exactly ${tokenUrl}.`)
  if (typeof claims.exp !== 'number') throw new OAuthError('invalid_client', 'The assertion has no exp claim.')
  if (claims.exp + CLOCK_TOLERANCE_SECONDS < nowSec) throw new OAuthError('invalid_client', 'The assertion has expired.')
  if (claims.exp > nowSec + ASSERTION_MAX_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) {
    throw new OAuthError('invalid_client', 'The assertion exp is more than five minutes ahead.')
  }
  if (typeof claims.iat !== 'number') throw new OAuthError('invalid_client', 'The assertion has no iat claim.')
  if (claims.iat > nowSec + CLOCK_TOLERANCE_SECONDS) throw new OAuthError('invalid_client', 'The assertion iat is in the future.')
  if (claims.iat < nowSec - ASSERTION_MAX_LIFETIME_SECONDS - CLOCK_TOLERANCE_SECONDS) throw new OAuthError('invalid_client', 'The assertion iat is too old.')
  if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > nowSec + CLOCK_TOLERANCE_SECONDS)) {
    throw new OAuthError('invalid_client', 'The assertion is not valid yet (nbf).')
  }
}

function grantedScopes(requested: string | undefined, held: string[], releases: ReadonlySet<string>): string[] {
  if (requested === undefined) return held.filter((s) => scopeIssuable(s, releases))
  const asked = requested.split(' ').filter(Boolean)
  if (asked.length === 0) throw new OAuthError('invalid_scope', 'scope must name at least one scope.')
  for (const scope of asked) {
    if (!isScope(scope)) throw new OAuthError('invalid_scope', `${scope} is not a scope.`)
    if (!held.includes(scope)) throw new OAuthError('invalid_scope', `The client does not hold ${scope}.`)
    if (!scopeIssuable(scope, releases)) throw new OAuthError('invalid_scope', `${scope} is not issued by this deployment.`)
  }
  return [...new Set(asked)]
}

/** client_credentials with private_key_jwt (RFC 7523): proves the client, redeems the jti once, mints an opaque token. */
export async function issueToken(deps: AppDeps, form: Record<string, string>, address: string): Promise<TokenResponse> {
  if (form.grant_type === undefined) throw new OAuthError('invalid_request', 'grant_type is required.')
  if (form.grant_type !== 'client_credentials') throw new OAuthError('unsupported_grant_type', 'Only client_credentials is supported.')
  if (form.client_assertion_type === undefined) throw new OAuthError('invalid_request', 'client_assertion_type is required.')
  if (form.client_assertion_type !== CLIENT_ASSERTION_TYPE) throw new OAuthError('invalid_request', `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}.`)
  if (!form.client_assertion) throw new OAuthError('invalid_request', 'client_assertion is required.')
  const jwt = form.client_assertion

  let header: ReturnType<typeof decodeProtectedHeader>
  let claims: JWTPayload
  try {
    if (jwt.split('.').length !== 3) throw new Error('not a JWS')
    header = decodeProtectedHeader(jwt)
    claims = decodeJwt(jwt)
  } catch {
    throw new OAuthError('invalid_request', 'client_assertion is not a well-formed JWT.')
  }

  // Until the signature is proven, every refusal is the same generic invalid_client.
  const alg = header.alg
  if (typeof alg !== 'string' || !ALLOWED_ALGS.has(alg)) throw generic()
  if (typeof claims.iss !== 'string' || claims.sub !== claims.iss) throw generic()
  if (form.client_id !== undefined && form.client_id !== claims.iss) throw generic()
  const client = await findClientForGrant(deps.db, claims.iss)
  if (!client || client.status !== 'active') throw generic()
  if (!deps.config.environments.includes(client.environment as Environment)) throw generic()
  if (!ipAllowed(address, client.org_ips) || !ipAllowed(address, client.ip_allowlist)) throw generic()
  const candidates = header.kid !== undefined
    ? client.jwks.keys.filter((k) => k.kid === header.kid)
    : client.jwks.keys
  if (candidates.length === 0) throw generic()
  let proven = false
  for (const jwk of candidates) {
    if (keyFitsAlg(jwk, alg) && await signatureVerifies(jwt, jwk, alg)) { proven = true; break }
  }
  if (!proven) throw generic()

  const now = deps.clock.now()
  const nowSec = Math.floor(now.getTime() / 1000)
  checkClaims(claims, `${deps.config.baseUrl}/oauth/token`, nowSec)
  if (typeof claims.jti !== 'string' || claims.jti.length === 0 || claims.jti.length > 255) {
    throw new OAuthError('invalid_request', 'The assertion needs a jti claim (1 to 255 characters).')
  }
  const scopes = grantedScopes(form.scope, client.scopes, deps.config.releases)

  const jtiExpiry = new Date(((claims.exp as number) + CLOCK_TOLERANCE_SECONDS) * 1000)
  if (!(await redeemJti(deps.db, client.id, claims.jti, jtiExpiry))) {
    throw new OAuthError('invalid_grant', 'This assertion (jti) was already redeemed; sign a new one.')
  }

  const environment = client.environment as Environment
  const token = TOKEN_PREFIX[environment] + randomBase62(32)
  await insertAccessToken(deps.db, {
    token_hash: sha256Hex(token),
    client_id: client.id,
    organization_id: client.organization_id,
    environment,
    scopes,
    expires_at: new Date(now.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000),
  })
  return { access_token: token, token_type: 'Bearer', expires_in: ACCESS_TOKEN_TTL_SECONDS, scope: scopes.join(' ') }
}
