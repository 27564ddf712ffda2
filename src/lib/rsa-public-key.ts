import type { KeyObject } from 'node:crypto'

/** The weakest RSA modulus accepted from an integrator, for encryption (card details) or signatures (OAuth clients). */
export const MIN_RSA_BITS = 2048
/** The only RSA public exponent accepted (JWK `e` "AQAB"): e = 1 makes encryption the identity and signatures forgeable, e = 3 invites broadcast attacks. */
export const RSA_PUBLIC_EXPONENT = 65537n

/**
 * Why an RSA public key supplied by an integrator must be refused, as the end of a sentence about the key
 * ("has 1024 bits; …"), or null when it has at least 2048 bits and the exponent 65537.
 */
export function rsaKeyWeakness(key: KeyObject): string | null {
  const details = key.asymmetricKeyDetails
  const bits = details?.modulusLength ?? 0
  if (bits < MIN_RSA_BITS) return `has ${bits} bits; RSA keys need at least ${MIN_RSA_BITS}`
  const exponent = details?.publicExponent
  if (exponent !== RSA_PUBLIC_EXPONENT) return `has the public exponent ${exponent ?? 'unknown'}; RSA keys must use ${RSA_PUBLIC_EXPONENT} (JWK e "AQAB")`
  return null
}
