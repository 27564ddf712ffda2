import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { sha256Hex } from '../../lib/crypto.js'

/**
 * Time-based one-time passwords (RFC 6238 over RFC 4226's HOTP): HMAC-SHA-1, 30-second steps, 6 digits, the
 * step before and after accepted for clock drift. What authenticator apps expect of an `otpauth://totp` URI.
 */
export const TOTP_STEP_SECONDS = 30
export const TOTP_DIGITS = 6
const DRIFT_STEPS = 1

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'

export function base32Encode(bytes: Buffer): string {
  let bits = 0
  let value = 0
  let out = ''
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return out
}

export function base32Decode(text: string): Buffer {
  const clean = text.replace(/[\s=-]/g, '').toUpperCase()
  const out: number[] = []
  let bits = 0
  let value = 0
  for (const ch of clean) {
    const index = BASE32.indexOf(ch)
    if (index === -1) throw new Error('not base32')
    value = (value << 5) | index
    bits += 5
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255)
      bits -= 8
    }
  }
  return Buffer.from(out)
}

/** A new shared secret: 160 bits, the HMAC-SHA-1 block RFC 4226 recommends. */
export function newTotpSecret(): Buffer {
  return randomBytes(20)
}

/** The 30-second step a moment falls in. */
export function totpStep(at: Date): number {
  return Math.floor(at.getTime() / 1000 / TOTP_STEP_SECONDS)
}

/** HOTP value of one counter (RFC 4226 section 5.3), `digits` long. */
export function hotp(secret: Buffer, counter: number, digits = TOTP_DIGITS): string {
  const message = Buffer.alloc(8)
  message.writeBigUInt64BE(BigInt(counter))
  const mac = createHmac('sha1', secret).update(message).digest()
  const offset = mac[mac.length - 1] & 0x0f
  const binary =
    ((mac[offset] & 0x7f) << 24) |
    (mac[offset + 1] << 16) |
    (mac[offset + 2] << 8) |
    mac[offset + 3]
  return String(binary % 10 ** digits).padStart(digits, '0')
}

/** The code an authenticator shows at `at`. */
export function totpCode(secret: Buffer, at: Date): string {
  return hotp(secret, totpStep(at))
}

/**
 * The step whose code `code` is, within one step of `at` and later than `lastStep` (a code is accepted once:
 * the caller records the step), or null. Every candidate is compared in constant time.
 */
export function matchTotp(
  secret: Buffer,
  code: string,
  at: Date,
  lastStep: number | null,
): number | null {
  const given = Buffer.from(code.replace(/\s/g, '').padEnd(TOTP_DIGITS, 'x').slice(0, 16))
  const now = totpStep(at)
  let matched: number | null = null
  for (let step = now - DRIFT_STEPS; step <= now + DRIFT_STEPS; step++) {
    const expected = Buffer.from(hotp(secret, step))
    const equal = given.length === expected.length && timingSafeEqual(given, expected)
    if (equal && (lastStep === null || step > lastStep) && matched === null) matched = step
  }
  return matched
}

/** The URI an authenticator app reads from the enrolment QR code. */
export function otpauthUri(secret: Buffer, account: string, issuer: string): string {
  const label = encodeURIComponent(`${issuer}:${account}`)
  const params = new URLSearchParams({
    secret: base32Encode(secret),
    issuer,
    algorithm: 'SHA1',
    digits: String(TOTP_DIGITS),
    period: String(TOTP_STEP_SECONDS),
  })
  return `otpauth://totp/${label}?${params}`
}

export const RECOVERY_CODE_COUNT = 10

/** Ten single-use recovery codes (50 random bits each, `xxxxx-xxxxx`), and the SHA-256 of each to store. */
export function newRecoveryCodes(): { codes: string[]; hashes: string[] } {
  const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
    const text = base32Encode(randomBytes(7)).slice(0, 10).toLowerCase()
    return `${text.slice(0, 5)}-${text.slice(5)}`
  })
  return { codes, hashes: codes.map(recoveryCodeHash) }
}

/** The stored form of a recovery code as typed: case, spaces and dashes do not matter. */
export function recoveryCodeHash(code: string): string {
  return sha256Hex(`recovery:${code.replace(/[\s-]/g, '').toLowerCase()}`)
}
