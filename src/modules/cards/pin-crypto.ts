import {
  constants,
  createPrivateKey,
  generateKeyPair,
  privateDecrypt,
  type KeyObject,
} from 'node:crypto'
import { promisify } from 'node:util'

const generateRsa = promisify(generateKeyPair)

/** Size of the RSA keys minted for PIN transport (the interface asks for 2048 bits or more). */
export const PIN_KEY_BITS = 2048
/** How long a minted PIN key can be used (decisions.md: 5 minutes). */
export const PIN_KEY_LIFETIME_MS = 5 * 60 * 1000
export const PIN_KEY_ALGORITHM = 'RSA-OAEP-256'

export interface PinKeyPair {
  publicJwk: { kty: string; n: string; e: string }
  publicPem: string
  /** PKCS#8 PEM: stored only encrypted, never returned. */
  privatePem: string
}

/** A fresh RSA key pair for one PIN: every pin-key call mints a new one. */
export async function createPinKeyPair(): Promise<PinKeyPair> {
  const { publicKey, privateKey } = await generateRsa('rsa', {
    modulusLength: PIN_KEY_BITS,
    publicExponent: 0x10001,
  })
  const jwk = (publicKey as KeyObject).export({ format: 'jwk' }) as {
    kty: string
    n: string
    e: string
  }
  return {
    publicJwk: { kty: jwk.kty, n: jwk.n, e: jwk.e },
    publicPem: (publicKey as KeyObject).export({ type: 'spki', format: 'pem' }).toString(),
    privatePem: (privateKey as KeyObject).export({ type: 'pkcs8', format: 'pem' }).toString(),
  }
}

/**
 * Decrypts an RSA-OAEP-256 ciphertext (base64 or base64url text) with the key's private half.
 * Answers null when the text was not encrypted to this key: the caller turns that into `pin_invalid`.
 */
export function decryptPin(privatePem: string, encrypted: string): string | null {
  const trimmed = encrypted.trim()
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null
  const ciphertext = Buffer.from(
    trimmed,
    trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64',
  )
  try {
    const key = createPrivateKey(privatePem)
    const plain = privateDecrypt(
      { key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' },
      ciphertext,
    )
    const text = plain.toString('utf8')
    plain.fill(0)
    return text
  } catch {
    return null
  }
}

/** A PIN is 4 to 12 digits and nothing else. */
export function isValidPin(pin: string | null): pin is string {
  return pin !== null && /^[0-9]{4,12}$/.test(pin)
}
