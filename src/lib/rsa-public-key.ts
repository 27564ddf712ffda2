import type { KeyObject } from 'node:crypto'

/** The weakest RSA modulus accepted from an integrator, for encryption (card details) or signatures (OAuth clients). */
export const MIN_RSA_BITS = 2048
/** The only RSA public exponent accepted (JWK `e` "AQAB"): e = 1 makes encryption the identity and signatures forgeable, e = 3 invites broadcast attacks. */
export const RSA_PUBLIC_EXPONENT = 65537n
/** Moduli with a prime factor below this are refused (2 included: an even modulus). */
export const SMALL_FACTOR_BOUND = 10_000

/** The primes below `bound` (sieve of Eratosthenes). */
function primesBelow(bound: number): number[] {
  const composite = new Uint8Array(bound)
  const primes: number[] = []
  for (let i = 2; i < bound; i++) {
    if (composite[i]) continue
    primes.push(i)
    for (let j = i * i; j < bound; j += i) composite[j] = 1
  }
  return primes
}

/**
 * The small primes in groups whose product stays below 2^53: one BigInt remainder per group (about 420 for the
 * 1,229 primes below 10,000), then plain number arithmetic per prime. A 4096-bit modulus is checked in well under
 * a millisecond.
 */
const PRIME_GROUPS: { product: bigint; primes: number[] }[] = (() => {
  const groups: { product: bigint; primes: number[] }[] = []
  let product = 1
  let primes: number[] = []
  for (const p of primesBelow(SMALL_FACTOR_BOUND)) {
    if (product * p > Number.MAX_SAFE_INTEGER) {
      groups.push({ product: BigInt(product), primes })
      product = 1
      primes = []
    }
    product *= p
    primes.push(p)
  }
  groups.push({ product: BigInt(product), primes })
  return groups
})()

/** The smallest prime below SMALL_FACTOR_BOUND that divides `n`, or null. */
export function smallPrimeFactor(n: bigint): number | null {
  for (const group of PRIME_GROUPS) {
    const rest = Number(n % group.product)
    for (const p of group.primes) if (rest % p === 0) return p
  }
  return null
}

/** The key's modulus (JWK `n`, base64url big-endian) as a number. */
function modulusOf(key: KeyObject): bigint {
  const { n } = key.export({ format: 'jwk' }) as { n?: string }
  return n ? BigInt(`0x${Buffer.from(n, 'base64url').toString('hex') || '0'}`) : 0n
}

/**
 * Why an RSA public key supplied by an integrator must be refused, as the end of a sentence about the key
 * ("has 1024 bits; …"), or null when it has at least 2048 bits, the exponent 65537, and a modulus that is odd with
 * no prime factor below 10,000 (an RSA modulus is the product of two large primes: an even one made card-detail
 * encryption fail with a 500 and, with a factor known, lets anyone decrypt or sign).
 */
export function rsaKeyWeakness(key: KeyObject): string | null {
  const details = key.asymmetricKeyDetails
  const bits = details?.modulusLength ?? 0
  if (bits < MIN_RSA_BITS) return `has ${bits} bits; RSA keys need at least ${MIN_RSA_BITS}`
  const exponent = details?.publicExponent
  if (exponent !== RSA_PUBLIC_EXPONENT)
    return `has the public exponent ${exponent ?? 'unknown'}; RSA keys must use ${RSA_PUBLIC_EXPONENT} (JWK e "AQAB")`
  const factor = smallPrimeFactor(modulusOf(key))
  if (factor === 2)
    return 'has an even modulus; an RSA modulus is the product of two large odd primes'
  if (factor !== null)
    return `has a modulus divisible by ${factor}; an RSA modulus is the product of two large primes`
  return null
}
