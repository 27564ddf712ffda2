import { createHash, createPublicKey } from 'node:crypto'

/**
 * What a person pastes as a client's public keys, read into a JWK Set: a JWK Set (`{"keys": [...]}`), one JWK, or
 * one or more PEM public keys (SPKI `PUBLIC KEY` or PKCS#1 `RSA PUBLIC KEY`), converted with node:crypto. Private
 * key material is refused here with its own message, before anything is sent on (the oauth module refuses it too),
 * and a page never shows it back. The keys' own rules (curve, RSA size, how many) are the oauth module's.
 */

export class KeyInputError extends Error {}

/** JWK members that only a private (or symmetric) key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']
const PRIVATE_PEM = /-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----/
const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g
const PUBLIC_PEM_LABELS = new Set(['PUBLIC KEY', 'RSA PUBLIC KEY'])

export const PRIVATE_KEY_REFUSAL =
  'This is a private key: it is never accepted. Paste the public key only (a JWK Set without "d", or a PEM block that starts with -----BEGIN PUBLIC KEY-----); the private key stays with whoever signs the client\'s assertions.'

export type Jwk = Record<string, unknown>

function privateMembers(jwk: unknown): string[] {
  return jwk && typeof jwk === 'object' ? PRIVATE_MEMBERS.filter((m) => m in (jwk as object)) : []
}

/** Whether the text holds private key material (a private PEM block, or a JWK member only private keys have): such text is never shown back. */
export function holdsPrivateKey(text: string): boolean {
  if (PRIVATE_PEM.test(text)) return true
  return /"(d|p|q|dp|dq|qi|oth|k)"\s*:/.test(text)
}

/** RFC 7638 thumbprint (SHA-256, base64url) of an EC or RSA public JWK; null for another key type. */
export function jwkThumbprint(jwk: Jwk): string | null {
  const members =
    jwk.kty === 'EC' ? ['crv', 'kty', 'x', 'y'] : jwk.kty === 'RSA' ? ['e', 'kty', 'n'] : null
  if (!members || members.some((m) => typeof jwk[m] !== 'string')) return null
  const canonical = `{${members.map((m) => `${JSON.stringify(m)}:${JSON.stringify(jwk[m])}`).join(',')}}`
  return createHash('sha256').update(canonical).digest('base64url')
}

/**
 * Keys without a kid get their thumbprint as kid. A set of several keys needs one on each; a client that signs
 * without a kid is still matched against every key, so adding one never stops a client from getting tokens.
 */
export function withKids(keys: readonly Jwk[]): Jwk[] {
  return keys.map((k) => {
    if (!k || typeof k !== 'object' || (typeof k.kid === 'string' && k.kid !== '')) return k
    const kid = jwkThumbprint(k)
    return kid ? { ...k, kid } : k
  })
}

function fromPem(text: string): Jwk[] {
  const blocks = [...text.matchAll(PEM_BLOCK)]
  if (blocks.length === 0)
    throw new KeyInputError(
      'The PEM text is incomplete: paste everything from -----BEGIN PUBLIC KEY----- to -----END PUBLIC KEY-----.',
    )
  return blocks.map(([block, label], i) => {
    const which = blocks.length > 1 ? ` (block ${i + 1})` : ''
    if (!PUBLIC_PEM_LABELS.has(label))
      throw new KeyInputError(
        `A PEM block labelled "${label}"${which} is not a public key: paste a "PUBLIC KEY" block.`,
      )
    try {
      return createPublicKey(block).export({ format: 'jwk' }) as Jwk
    } catch {
      throw new KeyInputError(
        `The PEM public key${which} could not be read: check that it was copied whole.`,
      )
    }
  })
}

function fromJson(text: string): Jwk[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    throw new KeyInputError(
      'This is not valid JSON: paste a JWK Set such as {"keys": [{"kty": "EC", "crv": "P-256", "x": "…", "y": "…"}]}.',
    )
  }
  const keys =
    value && typeof value === 'object' && Array.isArray((value as { keys?: unknown }).keys)
      ? (value as { keys: unknown[] }).keys
      : value && typeof value === 'object' && 'kty' in value
        ? [value]
        : null
  if (!keys)
    throw new KeyInputError('This JSON is not a JWK Set: it needs a "keys" array of public JWKs.')
  if (keys.some((k) => privateMembers(k).length > 0)) throw new KeyInputError(PRIVATE_KEY_REFUSAL)
  return keys as Jwk[]
}

/** The pasted text read into public JWKs (a kid on each), or a KeyInputError saying what to paste instead. */
export function parsePastedKeys(text: string): Jwk[] {
  const trimmed = text.trim()
  if (trimmed === '') throw new KeyInputError('Paste a JWK Set or a PEM public key.')
  if (PRIVATE_PEM.test(trimmed)) throw new KeyInputError(PRIVATE_KEY_REFUSAL)
  const keys = trimmed.startsWith('{')
    ? fromJson(trimmed)
    : trimmed.includes('-----BEGIN')
      ? fromPem(trimmed)
      : null
  if (!keys)
    throw new KeyInputError(
      'Paste a JWK Set ({"keys": [...]}) or a PEM public key (-----BEGIN PUBLIC KEY-----).',
    )
  if (keys.length === 0) throw new KeyInputError('The JWK Set has no key.')
  return withKids(keys)
}
