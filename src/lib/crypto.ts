import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  hash,
  hkdfSync,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto'

/** Hex SHA-256, used to store tokens and secrets by digest only. */
export function sha256Hex(input: string | Buffer): string {
  // One-shot: a third cheaper than a Hash object per call (a token is hashed on every request).
  return hash('sha256', input, 'hex')
}

export function hmacSha256(key: Buffer | string, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest()
}

/** Constant-time string comparison that does not leak length through early exit. */
export function safeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a).digest()
  const hb = createHash('sha256').update(b).digest()
  return timingSafeEqual(ha, hb) && a.length === b.length
}

const derivedKeys = new WeakMap<Buffer, Map<string, Buffer>>()

/** A purpose-bound key derived from the master key, so one secret never serves two uses (derived once per purpose). */
export function deriveKey(masterKey: Buffer, purpose: string): Buffer {
  let byPurpose = derivedKeys.get(masterKey)
  if (!byPurpose) derivedKeys.set(masterKey, (byPurpose = new Map()))
  let key = byPurpose.get(purpose)
  if (!key)
    byPurpose.set(
      purpose,
      (key = Buffer.from(hkdfSync('sha256', masterKey, Buffer.alloc(0), `svc:${purpose}`, 32))),
    )
  return key
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'

/** Base62 text of `byteLength` random bytes (rejection sampling keeps it unbiased). */
export function randomBase62(byteLength: number): string {
  const targetLength = Math.ceil((byteLength * 8) / Math.log2(62))
  let out = ''
  while (out.length < targetLength) {
    for (const b of randomBytes(targetLength * 2)) {
      if (b < 248) out += BASE62[b % 62]
      if (out.length === targetLength) break
    }
  }
  return out
}

/** AES-256-GCM envelope: iv(12) | tag(16) | ciphertext. */
export function encryptAesGcm(key: Buffer, plaintext: Buffer, aad?: string): Buffer {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  if (aad) cipher.setAAD(Buffer.from(aad))
  const body = Buffer.concat([cipher.update(plaintext), cipher.final()])
  return Buffer.concat([iv, cipher.getAuthTag(), body])
}

export function decryptAesGcm(key: Buffer, sealed: Buffer, aad?: string): Buffer {
  const iv = sealed.subarray(0, 12)
  const tag = sealed.subarray(12, 28)
  const decipher = createDecipheriv('aes-256-gcm', key, iv)
  if (aad) decipher.setAAD(Buffer.from(aad))
  decipher.setAuthTag(tag)
  return Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()])
}

/**
 * Envelope encryption: a fresh data key encrypts the payload, the master key wraps the data key.
 * Returns `{ wrappedKey, ciphertext }`, both safe to store.
 */
export function sealWithDataKey(
  masterKey: Buffer,
  plaintext: Buffer,
  aad?: string,
): { wrappedKey: Buffer; ciphertext: Buffer } {
  const dataKey = randomBytes(32)
  const ciphertext = encryptAesGcm(dataKey, plaintext, aad)
  const wrappedKey = encryptAesGcm(deriveKey(masterKey, 'data-key-wrap'), dataKey)
  dataKey.fill(0)
  return { wrappedKey, ciphertext }
}

export function openWithDataKey(
  masterKey: Buffer,
  wrappedKey: Buffer,
  ciphertext: Buffer,
  aad?: string,
): Buffer {
  const dataKey = decryptAesGcm(deriveKey(masterKey, 'data-key-wrap'), wrappedKey)
  try {
    return decryptAesGcm(dataKey, ciphertext, aad)
  } finally {
    dataKey.fill(0)
  }
}

/** Encrypts a short field (PAN, document number) under a purpose key; stored as base64 text. */
export function encryptField(masterKey: Buffer, purpose: string, value: string): string {
  return encryptAesGcm(deriveKey(masterKey, purpose), Buffer.from(value, 'utf8')).toString('base64')
}

export function decryptField(masterKey: Buffer, purpose: string, sealed: string): string {
  return decryptAesGcm(deriveKey(masterKey, purpose), Buffer.from(sealed, 'base64')).toString(
    'utf8',
  )
}
