import { createPublicKey, type JsonWebKey } from 'node:crypto'
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWTPayload } from 'jose'
import { isId } from '../../lib/ids.js'
import type { AppDeps } from '../../app-deps.js'
import type { Environment } from '../../config.js'
import { TOKEN_PREFIX } from '../../http/auth.js'
import { ipAllowed } from '../../http/ip.js'
import { storableText } from '../../http/validation.js'
import { rsaKeyWeakness } from '../../lib/rsa-public-key.js'
import { randomBase62, sha256Hex } from '../../lib/crypto.js'
import { GENERIC_CLIENT_FAILURE, OAuthError } from './oauth-error.js'
import { withTx } from '../../db/tx.js'
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

/** Before the signature is proven every invalid_client answer carries the same description; the reason only reaches the service log. */
const refuse = (reason: string) => new OAuthError('invalid_client', GENERIC_CLIENT_FAILURE, reason)

/** After the signature is proven the client is who it says: the answer names the failing check and what was expected. */
const refuseProven = (description: string) =>
  new OAuthError('invalid_client', description, description)

const isoAt = (sec: number) => new Date(sec * 1000).toISOString().replace('.000Z', 'Z')

function keyFitsAlg(jwk: Record<string, unknown>, alg: string): boolean {
  if (jwk.alg !== undefined && jwk.alg !== alg) return false
  return alg === 'ES256' ? jwk.kty === 'EC' : jwk.kty === 'RSA'
}

async function signatureVerifies(
  jwt: string,
  jwk: Record<string, unknown>,
  alg: string,
): Promise<boolean> {
  try {
    // A weak RSA key registered before keys were checked at registration proves nothing (e = 1 signatures are forgeable).
    if (
      jwk.kty === 'RSA' &&
      rsaKeyWeakness(createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })) !== null
    )
      return false
    const key = await importJWK(jwk as never, alg)
    await compactVerify(jwt, key, { algorithms: [alg] })
    return true
  } catch {
    return false
  }
}

/**
 * Claims checked once the signature is proven. The client is then known to hold its key, so the answer
 * names the failing check and the expected value (decisions: "Token endpoint messages"); the service's
 * own time is given where the check is about clocks, so a skewed signer sees by how much.
 */
function checkClaims(claims: JWTPayload, tokenUrls: readonly string[], nowSec: number): void {
  const audOk =
    typeof claims.aud === 'string'
      ? tokenUrls.includes(claims.aud)
      : Array.isArray(claims.aud) && claims.aud.some((a) => tokenUrls.includes(a))
  if (!audOk) {
    const got =
      claims.aud === undefined
        ? 'it is missing'
        : `it is ${JSON.stringify(claims.aud).slice(0, 200)}`
    throw refuseProven(
      `aud must be exactly ${tokenUrls.join(' or ')} (the token endpoint's URL; ${got}).`,
    )
  }
  const clock = `the service's clock reads ${isoAt(nowSec)}`
  if (typeof claims.exp !== 'number')
    throw refuseProven(
      'exp is required: a number of seconds since the epoch, at most 5 minutes ahead.',
    )
  if (claims.exp + CLOCK_TOLERANCE_SECONDS < nowSec)
    throw refuseProven(
      `exp is in the past: the assertion expired at ${isoAt(claims.exp)} and ${clock}; sign a new one.`,
    )
  if (claims.exp > nowSec + ASSERTION_MAX_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) {
    throw refuseProven(
      `exp is more than 5 minutes ahead: it is ${isoAt(claims.exp)} and ${clock}; an assertion lives at most ${ASSERTION_MAX_LIFETIME_SECONDS} s.`,
    )
  }
  if (typeof claims.iat !== 'number')
    throw refuseProven(
      'iat is required: a number of seconds since the epoch, the time the assertion was signed.',
    )
  if (claims.iat > nowSec + CLOCK_TOLERANCE_SECONDS)
    throw refuseProven(
      `iat is in the future: it is ${isoAt(claims.iat)} and ${clock} (${CLOCK_TOLERANCE_SECONDS} s of skew are tolerated).`,
    )
  if (claims.iat < nowSec - ASSERTION_MAX_LIFETIME_SECONDS - CLOCK_TOLERANCE_SECONDS) {
    throw refuseProven(
      `iat is more than 5 minutes in the past: it is ${isoAt(claims.iat)} and ${clock}; sign a new assertion.`,
    )
  }
  if (
    claims.nbf !== undefined &&
    (typeof claims.nbf !== 'number' || claims.nbf > nowSec + CLOCK_TOLERANCE_SECONDS)
  ) {
    throw refuseProven(
      typeof claims.nbf !== 'number'
        ? 'nbf must be a number of seconds since the epoch.'
        : `nbf is in the future: it is ${isoAt(claims.nbf)} and ${clock} (${CLOCK_TOLERANCE_SECONDS} s of skew are tolerated).`,
    )
  }
}

function grantedScopes(
  requested: string | undefined,
  held: string[],
  releases: ReadonlySet<string>,
): string[] {
  const asked = (requested ?? '').split(' ').filter(Boolean)
  if (asked.length === 0) return held.filter((s) => scopeIssuable(s, releases))
  for (const scope of asked) {
    if (!isScope(scope)) throw new OAuthError('invalid_scope', `${scope} is not a scope.`)
    if (!held.includes(scope))
      throw new OAuthError('invalid_scope', `The client does not hold ${scope}.`)
    if (!scopeIssuable(scope, releases))
      throw new OAuthError('invalid_scope', `${scope} is not issued by this deployment.`)
  }
  return [...new Set(asked)]
}

/**
 * The `aud` values accepted: exactly `{BASE_URL}/oauth/token`. When BASE_URL was not configured the
 * service only guessed its own address (`http://localhost:$PORT`), so the token endpoint's URL as this
 * request reached it (`http://<Host>/oauth/token`) is accepted as well; still compared exactly.
 */
export function acceptedAudiences(deps: AppDeps, requestTokenUrl?: string): string[] {
  const configured = `${deps.config.baseUrl}/oauth/token`
  if (deps.config.baseUrlExplicit || !requestTokenUrl || requestTokenUrl === configured)
    return [configured]
  return [configured, requestTokenUrl]
}

/** client_credentials with private_key_jwt (RFC 7523): proves the client, redeems the jti once, mints an opaque token. */
export async function issueToken(
  deps: AppDeps,
  form: Record<string, string>,
  address: string,
  audiences: readonly string[] = acceptedAudiences(deps),
): Promise<TokenResponse> {
  if (form.grant_type === undefined)
    throw new OAuthError('invalid_request', 'grant_type is required.')
  if (form.grant_type !== 'client_credentials')
    throw new OAuthError('unsupported_grant_type', 'Only client_credentials is supported.')
  if (form.client_assertion_type === undefined)
    throw new OAuthError('invalid_request', 'client_assertion_type is required.')
  if (form.client_assertion_type !== CLIENT_ASSERTION_TYPE)
    throw new OAuthError(
      'invalid_request',
      `client_assertion_type must be ${CLIENT_ASSERTION_TYPE}.`,
    )
  if (!form.client_assertion)
    throw new OAuthError('invalid_request', 'client_assertion is required.')
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

  // Until the signature is proven every invalid_client answer has one description: nothing to probe with.
  const alg = header.alg
  if (typeof alg !== 'string' || !ALLOWED_ALGS.has(alg))
    throw refuse(`alg ${String(alg)} not accepted`)
  if (typeof claims.iss !== 'string' || claims.sub !== claims.iss)
    throw refuse('iss and sub are not the same client id')
  if (!isId('oc', claims.iss)) throw refuse('iss is not a client id')
  if (form.client_id !== undefined && form.client_id !== claims.iss)
    throw refuse('client_id differs from iss')
  const client = await findClientForGrant(deps.db, claims.iss)
  if (!client) throw refuse('unknown client')
  if (client.status !== 'active') throw refuse('client revoked')
  if (!deps.config.environments.includes(client.environment as Environment))
    throw refuse(`environment ${client.environment} not served here`)
  if (!ipAllowed(address, client.org_ips))
    throw refuse(`address ${address} outside the organization network policy`)
  if (!ipAllowed(address, client.ip_allowlist))
    throw refuse(`address ${address} outside the client allowlist`)
  const candidates =
    header.kid !== undefined
      ? client.jwks.keys.filter((k) => k.kid === header.kid)
      : client.jwks.keys
  if (candidates.length === 0) throw refuse(`kid ${String(header.kid)} matches no registered key`)
  let proven = false
  for (const jwk of candidates) {
    if (keyFitsAlg(jwk, alg) && (await signatureVerifies(jwt, jwk, alg))) {
      proven = true
      break
    }
  }
  if (!proven) throw refuse('signature does not verify with the registered key(s)')

  const now = deps.clock.now()
  const nowSec = Math.floor(now.getTime() / 1000)
  checkClaims(claims, audiences, nowSec)
  if (
    typeof claims.jti !== 'string' ||
    claims.jti.length === 0 ||
    claims.jti.length > 255 ||
    !storableText(claims.jti)
  ) {
    throw new OAuthError(
      'invalid_request',
      'The assertion needs a jti claim (1 to 255 characters).',
    )
  }
  const scopes = grantedScopes(form.scope, client.scopes, deps.config.releases)

  const jtiExpiry = new Date(((claims.exp as number) + CLOCK_TOLERANCE_SECONDS) * 1000)
  const environment = client.environment as Environment
  const token = TOKEN_PREFIX[environment] + randomBase62(32)
  // The jti is spent only together with the token it buys: a failure in between leaves the assertion usable.
  await withTx(deps.db, async (trx) => {
    if (!(await redeemJti(trx, client.id, claims.jti as string, jtiExpiry, now))) {
      throw new OAuthError(
        'invalid_grant',
        'This assertion (jti) was already redeemed; sign a new one.',
      )
    }
    await insertAccessToken(trx, {
      token_hash: sha256Hex(token),
      client_id: client.id,
      organization_id: client.organization_id,
      environment,
      scopes,
      expires_at: new Date(now.getTime() + ACCESS_TOKEN_TTL_SECONDS * 1000),
    })
  })
  return {
    access_token: token,
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_TTL_SECONDS,
    scope: scopes.join(' '),
  }
}
