import { createPublicKey } from 'node:crypto'
import { ApiError } from '../../http/errors.js'
import { rsaKeyWeakness } from '../../lib/rsa-public-key.js'

export const MAX_CLIENT_KEYS = 3
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']

export type PublicJwk = Record<string, unknown> & { kty: string; kid?: string }

function refuse(param: string, message: string): never {
  throw new ApiError('invalid_parameter', { param, message })
}

/**
 * Checks a client's JWK Set: public EC P-256 or RSA (≥ 2048 bits, exponent 65537, an odd modulus without small factors)
 * keys only, at most 3, each with a unique kid when several.
 */
export function validateJwks(value: unknown): { keys: PublicJwk[] } {
  if (!value || typeof value !== 'object' || !Array.isArray((value as { keys?: unknown }).keys)) {
    refuse('jwks', 'jwks must be a JWK Set: {"keys": [...]}.')
  }
  const keys = (value as { keys: unknown[] }).keys
  if (keys.length === 0) refuse('jwks.keys', 'Register at least one public key.')
  if (keys.length > MAX_CLIENT_KEYS)
    refuse('jwks.keys', `At most ${MAX_CLIENT_KEYS} keys can be registered.`)
  const kids = new Set<string>()
  const out: PublicJwk[] = []
  keys.forEach((raw, i) => {
    const param = `jwks.keys[${i}]`
    if (!raw || typeof raw !== 'object' || Array.isArray(raw))
      refuse(param, 'Each key must be a JWK object.')
    const jwk = raw as Record<string, unknown>
    const leaked = PRIVATE_MEMBERS.filter((m) => m in jwk)
    if (leaked.length > 0)
      refuse(
        param,
        `Private key material (${leaked.join(', ')}) is never accepted; register the public key only.`,
      )
    if (keys.length > 1 && (typeof jwk.kid !== 'string' || jwk.kid === ''))
      refuse(`${param}.kid`, 'Every key needs a kid when more than one is registered.')
    if (jwk.kid !== undefined) {
      if (typeof jwk.kid !== 'string' || jwk.kid.length > 128)
        refuse(`${param}.kid`, 'kid must be a string of at most 128 characters.')
      if (kids.has(jwk.kid)) refuse(`${param}.kid`, 'Each kid must be unique.')
      kids.add(jwk.kid)
    }
    if (jwk.use !== undefined && jwk.use !== 'sig')
      refuse(`${param}.use`, 'Keys are for signatures (use "sig").')
    if (jwk.kty === 'EC') {
      if (jwk.crv !== 'P-256') refuse(`${param}.crv`, 'EC keys must be on curve P-256 (ES256).')
      if (jwk.alg !== undefined && jwk.alg !== 'ES256')
        refuse(`${param}.alg`, 'EC P-256 keys sign with ES256.')
    } else if (jwk.kty === 'RSA') {
      if (jwk.alg !== undefined && jwk.alg !== 'RS256')
        refuse(`${param}.alg`, 'RSA keys sign with RS256.')
    } else {
      refuse(`${param}.kty`, 'Keys must be EC (P-256) or RSA (2048 bits or more, exponent 65537).')
    }
    let key
    try {
      key = createPublicKey({ key: jwk as never, format: 'jwk' })
    } catch {
      throw new ApiError('invalid_public_key', {
        param,
        message: 'The key is not a valid public JWK.',
      })
    }
    // e = 1 would let anyone forge this client's signatures; e = 3, short moduli and factorable ones are refused alike.
    const weakness = jwk.kty === 'RSA' ? rsaKeyWeakness(key) : null
    if (weakness)
      throw new ApiError('invalid_public_key', { param, message: `This key ${weakness}.` })
    const { kty, crv, x, y, n, e, kid, alg, use } = jwk
    out.push(
      Object.fromEntries(
        Object.entries({ kty, crv, x, y, n, e, kid, alg, use }).filter(([, v]) => v !== undefined),
      ) as PublicJwk,
    )
  })
  return { keys: out }
}
