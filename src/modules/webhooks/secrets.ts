import type { BoundedCache } from '../../lib/bounded-cache.js'
import { decryptField, encryptField, randomBase62 } from '../../lib/crypto.js'

/** After a rotation the replaced secret keeps signing (a second `v1=`) this long. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000

const PURPOSE = 'webhook-secret'

/** A fresh signing secret, shown to the caller once (create, rotate). */
export function newWebhookSecret(): string {
  return `whsec_${randomBase62(32)}`
}

/** The stored form of a secret: AES-GCM under a key derived from the master key. */
export function sealSecret(masterKey: Buffer, secret: string): string {
  return encryptField(masterKey, PURPOSE, secret)
}

/** Decrypting once per secret is enough for a worker: `opened` is the runtime's bounded cache, so rotated secrets fall out. */
export function openSecret(
  masterKey: Buffer,
  sealed: string,
  opened: BoundedCache<string, string>,
): string {
  let secret = opened.get(sealed)
  if (secret === undefined) {
    secret = decryptField(masterKey, PURPOSE, sealed)
    opened.set(sealed, secret)
  }
  return secret
}

export interface SealedSecrets {
  secret_sealed: string
  previous_secret_sealed: string | null
  previous_secret_expires_at: Date | null
}

/** The secrets that sign a delivery made at `now`: the current one, plus the replaced one while its overlap lasts. */
export function signingSecrets(
  masterKey: Buffer,
  row: SealedSecrets,
  now: Date,
  opened: BoundedCache<string, string>,
): string[] {
  const secrets = [openSecret(masterKey, row.secret_sealed, opened)]
  if (
    row.previous_secret_sealed &&
    row.previous_secret_expires_at &&
    row.previous_secret_expires_at.getTime() > now.getTime()
  ) {
    secrets.push(openSecret(masterKey, row.previous_secret_sealed, opened))
  }
  return secrets
}
