import { createPublicKey, type KeyObject, type JsonWebKey } from 'node:crypto'
import { CompactEncrypt } from 'jose'
import { ApiError } from '../../http/errors.js'
import { rsaKeyWeakness } from '../../lib/rsa-public-key.js'

function invalidKey(message: string): ApiError {
  return new ApiError('invalid_public_key', { param: 'public_key', message })
}

/**
 * The caller's RSA public key from a JWK object or PEM text. Private material, other key types, keys under
 * 2048 bits, exponents other than 65537 (e = 1 would leave the JWE readable by anyone) and moduli that are even or
 * have a small factor are refused with `invalid_public_key`.
 */
export function importCallerKey(input: unknown): KeyObject {
  let key: KeyObject
  try {
    if (typeof input === 'string') {
      if (input.length > 16384) throw invalidKey('public_key is too long to be an RSA public key.')
      if (/PRIVATE KEY/.test(input))
        throw invalidKey('Send the public key only; private keys are refused.')
      key = createPublicKey({ key: input.trim(), format: 'pem' })
    } else if (input && typeof input === 'object' && !Array.isArray(input)) {
      const jwk = input as Record<string, unknown>
      if (['d', 'p', 'q', 'dp', 'dq', 'qi'].some((f) => f in jwk))
        throw invalidKey('Send the public key only; private JWK members are refused.')
      if (jwk.kty !== 'RSA') throw invalidKey('public_key must be an RSA key (JWK kty "RSA").')
      key = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
    } else {
      throw invalidKey('public_key must be an RSA public key as a JWK object or PEM text.')
    }
  } catch (err) {
    if (err instanceof ApiError) throw err
    throw invalidKey('public_key is not a readable RSA public key (JWK or PEM).')
  }
  if (key.asymmetricKeyType !== 'rsa') throw invalidKey('public_key must be an RSA key.')
  const weakness = rsaKeyWeakness(key)
  if (weakness) throw invalidKey(`public_key ${weakness}.`)
  return key
}

export interface CardSecrets {
  number: string
  cvc: string
  exp_month: number
  exp_year: number
}

/** Compact JWE (RSA-OAEP-256 key wrap, A256GCM content) that only the holder of the private key can open. */
export async function encryptDetails(key: KeyObject, secrets: CardSecrets): Promise<string> {
  const plaintext = new TextEncoder().encode(JSON.stringify(secrets))
  return new CompactEncrypt(plaintext)
    .setProtectedHeader({ alg: 'RSA-OAEP-256', enc: 'A256GCM', cty: 'application/json' })
    .encrypt(key)
}
