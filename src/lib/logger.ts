import pino, { type Logger } from 'pino'

/** Paths never written to logs, whatever object carries them. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'headers.authorization',
  'authorization',
  'access_token',
  'client_assertion',
  'secret',
  'password',
  'pan', 'number', 'cvc', 'pin', 'encrypted_pin', 'content',
  '*.authorization', '*.access_token', '*.client_assertion', '*.secret', '*.pan', '*.cvc', '*.pin',
  '*.encrypted_pin', '*.number', '*.content', '*.private_key', '*.d', '*.p', '*.q',
  'body', '*.body',
]

/** The service logger: JSON lines, secrets redacted by path (and `Secret` values print masked anyway). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, base: { service: 'svc' } }, destination)
}
