import { createHmac, timingSafeEqual } from 'node:crypto'
import { SvcSignatureVerificationError } from './errors.js'

/**
 * Webhook signatures, the SDK's copy of the service's `src/lib/webhook-signature.ts`:
 * `Svc-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`, one `v1=` per valid secret
 * during a rotation. Authorization requests to an authorization endpoint are signed the same way.
 */

export const DEFAULT_TOLERANCE_SECONDS = 300

/** The header carrying the signature (Node lower-cases it: `req.headers['svc-signature']`). */
export const SIGNATURE_HEADER = 'Svc-Signature'

function computeSignature(secret: string, timestamp: number, rawBody: string | Uint8Array): string {
  return createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')
}

function parseHeader(
  header: string | null | undefined,
): { timestamp: number; signatures: string[] } | null {
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

export interface VerifyOptions {
  /** Seconds of difference allowed between the signature's timestamp and now (default 300; 0 turns the check off). */
  tolerance?: number
  /** Now, in Unix seconds (tests). */
  nowSeconds?: number
}

/** Signs and verifies `Svc-Signature` headers; reached as `Svc.webhooks` and `svc.webhooks`. */
export class Webhooks {
  /**
   * True when `header` carries a signature of `rawBody` (the exact bytes received, before JSON parsing) by one of
   * `secrets` (pass both during a rotation), made within the tolerance. Every candidate is compared in constant time.
   */
  verifySignature(
    rawBody: string | Uint8Array,
    header: string | string[] | null | undefined,
    secrets: string | readonly string[],
    options: VerifyOptions = {},
  ): boolean {
    const parsed = parseHeader(Array.isArray(header) ? header[0] : header)
    if (!parsed) return false
    const tolerance = options.tolerance ?? DEFAULT_TOLERANCE_SECONDS
    const now = options.nowSeconds ?? Math.floor(Date.now() / 1000)
    if (tolerance > 0 && Math.abs(now - parsed.timestamp) > tolerance) return false
    let ok = false
    for (const secret of typeof secrets === 'string' ? [secrets] : secrets) {
      const expected = Buffer.from(computeSignature(secret, parsed.timestamp, rawBody), 'hex')
      for (const candidate of parsed.signatures) {
        if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) ok = true
      }
    }
    return ok
  }

  /**
   * Verifies, then parses: the one call a receiver needs. Throws `SvcSignatureVerificationError` when the header is
   * missing or malformed, no signature matches, or the timestamp is more than `tolerance` seconds away.
   */
  constructEvent<T = SvcEvent>(
    rawBody: string | Uint8Array,
    header: string | string[] | null | undefined,
    secret: string | readonly string[],
    tolerance: number = DEFAULT_TOLERANCE_SECONDS,
  ): T {
    if (!parseHeader(Array.isArray(header) ? header[0] : header)) {
      throw new SvcSignatureVerificationError(
        `No valid ${SIGNATURE_HEADER} header (expected t=<unix seconds>,v1=<hex>)`,
      )
    }
    if (!this.verifySignature(rawBody, header, secret, { tolerance })) {
      throw new SvcSignatureVerificationError(
        `${SIGNATURE_HEADER} does not match the body for the secret given, or its timestamp is more than ${tolerance} s away`,
      )
    }
    const text = typeof rawBody === 'string' ? rawBody : Buffer.from(rawBody).toString('utf8')
    return JSON.parse(text) as T
  }

  /** A header for `rawBody` signed with every secret given (tests, and `svc listen` forwarding). */
  generateTestHeader(
    rawBody: string | Uint8Array,
    secrets: string | readonly string[],
    timestamp: number = Math.floor(Date.now() / 1000),
  ): string {
    const list = typeof secrets === 'string' ? [secrets] : secrets
    return [
      `t=${timestamp}`,
      ...list.map((s) => `v1=${computeSignature(s, timestamp, rawBody)}`),
    ].join(',')
  }
}

/** An event as delivered (`GET /v1/events/{id}`'s body). */
export interface SvcEvent<O = Record<string, unknown>> {
  id: string
  object: 'event'
  type: string
  api_version: string
  environment: 'sandbox' | 'production'
  created_at: string
  data: { object: O }
}

/** What an authorization endpoint answers (decisions: "Authorization decided by the integrator"). */
export type AuthorizationDecision = { approved: false } | { approved: true; amount?: number }

/**
 * Reads an `authorization.request` sent to your authorization endpoint (verified like a webhook) and builds the answer:
 * `decide(authorization)` returns `true`/`false` or `{approved, amount?}` (a partial approval: `0 < amount ≤ requested`).
 * Answer within the endpoint's `timeout_ms` with status 200 and the returned `body`.
 */
export async function answerAuthorizationRequest(
  rawBody: string | Uint8Array,
  header: string | string[] | null | undefined,
  secret: string | readonly string[],
  decide: (
    authorization: Record<string, unknown> & { id: string; amount: number; currency: string },
    event: SvcEvent,
  ) => boolean | AuthorizationDecision | Promise<boolean | AuthorizationDecision>,
  options: { tolerance?: number } = {},
): Promise<{
  status: 200
  headers: { 'content-type': 'application/json' }
  body: string
  decision: AuthorizationDecision
  event: SvcEvent
}> {
  const event = new Webhooks().constructEvent(
    rawBody,
    header,
    secret,
    options.tolerance ?? DEFAULT_TOLERANCE_SECONDS,
  )
  const authorization = event.data.object as Record<string, unknown> & {
    id: string
    amount: number
    currency: string
  }
  const decision = authorizationDecision(await decide(authorization, event), authorization.amount)
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(decision),
    decision,
    event,
  }
}

/** `true`/`false` or `{approved, amount?}` as the endpoint must answer it; a partial amount outside `1..requested` is refused here, before the service would. */
export function authorizationDecision(
  answer: boolean | AuthorizationDecision,
  requested?: number,
): AuthorizationDecision {
  if (typeof answer === 'boolean') return { approved: answer }
  if (!answer.approved) return { approved: false }
  if (answer.amount === undefined) return { approved: true }
  if (
    !Number.isInteger(answer.amount) ||
    answer.amount <= 0 ||
    (requested !== undefined && answer.amount > requested)
  ) {
    throw new RangeError(
      `a partial approval's amount must be an integer in 1..${requested ?? 'the requested amount'} (minor units); got ${answer.amount}`,
    )
  }
  return { approved: true, amount: answer.amount }
}
