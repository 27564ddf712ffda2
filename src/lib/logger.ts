import pino, { type Logger } from 'pino'
import { luhnValid } from './luhn.js'

/** Keys whose values never reach a log line, at any depth of any logged object. */
export const SENSITIVE_KEYS = new Set([
  'authorization',
  'cookie',
  'set-cookie',
  'proxy-authorization',
  'access_token',
  'refresh_token',
  'id_token',
  'token',
  'client_assertion',
  'client_secret',
  'secret',
  'signing_secret',
  'password',
  'api_key',
  'master_key',
  'private_key',
  'private_jwk',
  'pan',
  'number',
  'card_number',
  'cvc',
  'cvv',
  'cvc2',
  'pin',
  'encrypted_pin',
  'pin_block',
  'content',
  'body',
  'payload',
  'd',
  'p',
  'q',
  'dp',
  'dq',
  'qi',
  'k',
  // A failed statement's bound values (the embedded database's errors carry them as `params`).
  'params',
  'parameters',
])

/** Paths redacted by pino itself: a second line of defence for the common shapes. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'access_token',
  'client_assertion',
  'secret',
  'password',
  'pan',
  'number',
  'cvc',
  'pin',
  'encrypted_pin',
  'content',
  'body',
  '*.authorization',
  '*.access_token',
  '*.client_assertion',
  '*.secret',
  '*.pan',
  '*.cvc',
  '*.pin',
  '*.encrypted_pin',
  '*.number',
  '*.content',
  '*.private_key',
  '*.d',
  '*.p',
  '*.q',
  '*.body',
]

const CENSOR = '[redacted]'
const MAX_DEPTH = 8

/** Plain data (including pino's serialized errors and their causes), as opposed to class instances. */
function isPlain(value: object): boolean {
  return (
    Object.getPrototypeOf(value) === null ||
    (value as { constructor?: unknown }).constructor === Object
  )
}

/**
 * A copy of a logged value with every sensitive key censored at any depth. Only plain objects, arrays
 * and errors are walked (errors through pino's own serializer); framework objects such as the request
 * are left to their serializers, which never include headers or bodies.
 */
export function scrub(value: unknown, depth = 0, seen = new WeakSet<object>()): unknown {
  if (value === null || typeof value !== 'object') return value
  if (depth > MAX_DEPTH) return '[depth]'
  if (seen.has(value)) return '[circular]'
  if (value instanceof Error) return scrub({ ...pino.stdSerializers.err(value) }, depth, seen)
  if (Array.isArray(value)) {
    seen.add(value)
    return value.map((v) => scrub(v, depth + 1, seen))
  }
  if (!isPlain(value)) return value
  seen.add(value)
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    out[key] =
      SENSITIVE_KEYS.has(key.toLowerCase()) && v !== null && v !== undefined
        ? CENSOR
        : scrub(v, depth + 1, seen)
  }
  return out
}

const TOKEN_PATTERN = /\b(at_(?:test|live)_|op_)[A-Za-z0-9_-]{8,}/g
const BEARER_PATTERN = /(Bearer\s+)[^\s"\\]+/gi
const PAN_PATTERN = /(?<!\d)\d{15,19}(?!\d)/g

/** Last pass over the finished line: access tokens, bearer credentials and card numbers inside free text. */
export function scrubLine(line: string): string {
  return line
    .replace(BEARER_PATTERN, `$1${CENSOR}`)
    .replace(TOKEN_PATTERN, `$1${CENSOR}`)
    .replace(PAN_PATTERN, (digits) => (luhnValid(digits) ? CENSOR : digits))
}

/** The service logger: JSON lines; secrets and card data censored by key at any depth, and in free text. */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'svc' },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      // Errors were already serialized (and scrubbed) by the log formatter; serializing again would lose their type.
      serializers: { err: (value: unknown) => (value instanceof Error ? scrub(value) : value) },
      formatters: { log: (object) => scrub(object) as Record<string, unknown> },
      hooks: { streamWrite: scrubLine },
    },
    destination,
  )
}
