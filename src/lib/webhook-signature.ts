import { createHmac, timingSafeEqual } from 'node:crypto'

/**
 * Webhook signatures: `Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`.
 * The signed string and header layout are Stripe's, so off-the-shelf verifiers work too. During a secret
 * rotation the header carries one `v1=` per valid secret. Dependency-free, so receivers can copy this file.
 */

/** Receivers should refuse signatures older (or further in the future) than this. */
export const DEFAULT_TOLERANCE_SECONDS = 300

export interface ParsedSignature {
  timestamp: number
  signatures: string[]
}

/** Hex HMAC-SHA256 of `"<timestamp>.<body>"` under `secret` (the whole `whsec_…` string is the key). */
export function computeSignature(
  secret: string,
  timestamp: number,
  rawBody: string | Buffer,
): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')
}

/** The header value for a body signed with every secret given (current first). */
export function signatureHeader(
  rawBody: string | Buffer,
  secrets: readonly string[],
  timestamp: number,
): string {
  return [
    `t=${timestamp}`,
    ...secrets.map((s) => `v1=${computeSignature(s, timestamp, rawBody)}`),
  ].join(',')
}

/** Reads `t=` and every `v1=` from a header; null when the header is malformed. */
export function parseSignatureHeader(header: string | null | undefined): ParsedSignature | null {
  if (typeof header !== 'string' || header.length === 0 || header.length > 4096) return null
  let timestamp: number | null = null
  const signatures: string[] = []
  for (const part of header.split(',')) {
    const eq = part.indexOf('=')
    if (eq < 0) continue
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (key === 't' && /^\d{1,12}$/.test(value)) timestamp = Number(value)
    else if (key === 'v1' && /^[0-9a-f]{64}$/i.test(value)) signatures.push(value.toLowerCase())
  }
  return timestamp === null || signatures.length === 0 ? null : { timestamp, signatures }
}

/**
 * True when `header` carries a valid signature of `rawBody` (the exact bytes received, before any JSON
 * parsing) by one of `secrets`, made within `toleranceSec` of now. Comparisons are constant-time and every
 * candidate is checked, so timing reveals nothing about which part matched.
 */
export function verifyWebhook(
  rawBody: string | Buffer,
  header: string | null | undefined,
  secrets: string | readonly string[],
  toleranceSec: number = DEFAULT_TOLERANCE_SECONDS,
  nowSec: number = Math.floor(Date.now() / 1000),
): boolean {
  const parsed = parseSignatureHeader(header)
  if (!parsed) return false
  if (toleranceSec > 0 && Math.abs(nowSec - parsed.timestamp) > toleranceSec) return false
  let ok = false
  for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
    const expected = Buffer.from(computeSignature(secret, parsed.timestamp, rawBody), 'hex')
    for (const candidate of parsed.signatures) {
      if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) ok = true
    }
  }
  return ok
}

export class WebhookVerificationError extends Error {}

/** Verifies, then parses the body: the one call a receiver needs. Throws WebhookVerificationError. */
export function constructWebhookEvent<T = Record<string, unknown>>(
  rawBody: string | Buffer,
  header: string | null | undefined,
  secrets: string | readonly string[],
  toleranceSec: number = DEFAULT_TOLERANCE_SECONDS,
): T {
  if (!verifyWebhook(rawBody, header, secrets, toleranceSec)) {
    throw new WebhookVerificationError(
      'Svc-Signature does not match the body, or its timestamp is outside the tolerance',
    )
  }
  return JSON.parse(typeof rawBody === 'string' ? rawBody : rawBody.toString('utf8')) as T
}
