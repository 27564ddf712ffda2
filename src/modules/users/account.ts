import type { AppDeps } from '../../app-deps.js'
import { json } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import { decryptField, encryptField } from '../../lib/crypto.js'
import { audit } from './audit.js'
import { verifyPassword } from './passwords.js'
import * as repo from './repo.js'
import { actorOf, TOTP_PURPOSE, type ConsoleSession } from './sessions.js'
import { base32Encode, matchTotp, newRecoveryCodes, newTotpSecret, otpauthUri } from './totp.js'

/** What the enrolment page shows: the secret to type, and the URI its QR code carries. */
export interface TotpEnrolment {
  secret: string
  uri: string
}

const ISSUER = 'svc console'

function sealed(deps: AppDeps, secret: Buffer): string {
  return encryptField(deps.config.masterKey, TOTP_PURPOSE, secret.toString('base64'))
}

function opened(deps: AppDeps, value: string): Buffer {
  return Buffer.from(decryptField(deps.config.masterKey, TOTP_PURPOSE, value), 'base64')
}

/**
 * Starts (or restarts) enrolment: a new secret is stored sealed, not yet enabled, until a code of it is
 * confirmed. Null when two-step verification is already on.
 */
export async function beginTotpEnrolment(
  deps: AppDeps,
  session: ConsoleSession,
): Promise<TotpEnrolment | null> {
  const user = await repo.findUser(deps.db, session.user.id)
  if (!user || user.totp_enabled_at !== null) return null
  const secret = newTotpSecret()
  await repo.updateUser(deps.db, user.id, {
    totp_secret_sealed: sealed(deps, secret),
    updated_at: deps.clock.now(),
  })
  return { secret: base32Encode(secret), uri: otpauthUri(secret, user.email, ISSUER) }
}

/** The enrolment in progress (to show it again after a wrong code), or null. */
export async function pendingTotpEnrolment(
  deps: AppDeps,
  session: ConsoleSession,
): Promise<TotpEnrolment | null> {
  const user = await repo.findUser(deps.db, session.user.id)
  if (!user || user.totp_enabled_at !== null || user.totp_secret_sealed === null) return null
  const secret = opened(deps, user.totp_secret_sealed)
  return { secret: base32Encode(secret), uri: otpauthUri(secret, user.email, ISSUER) }
}

export type TotpConfirmation =
  | { kind: 'wrong_code' }
  | { kind: 'not_started' }
  | { kind: 'enabled'; recoveryCodes: string[] }

/**
 * Turns two-step verification on when `code` is a current code of the pending secret, and makes the ten
 * recovery codes: shown once, in this answer; only their digests are kept. Audited as `totp.enabled`.
 */
export async function confirmTotpEnrolment(
  deps: AppDeps,
  session: ConsoleSession,
  code: string,
  address: string,
): Promise<TotpConfirmation> {
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const user = await repo.lockUser(trx, session.user.id)
    if (!user || user.totp_enabled_at !== null || user.totp_secret_sealed === null)
      return { kind: 'not_started' as const }
    const step = /^\d{6}$/.test(code.trim())
      ? matchTotp(opened(deps, user.totp_secret_sealed), code.trim(), now, null)
      : null
    if (step === null) return { kind: 'wrong_code' as const }
    const { codes, hashes } = newRecoveryCodes()
    await repo.updateUser(trx, user.id, {
      totp_enabled_at: now,
      totp_last_step: step,
      recovery_code_hashes: json(hashes),
      updated_at: now,
    })
    await audit(trx, actorOf(session, now), 'totp.enabled', user.id, address)
    return { kind: 'enabled' as const, recoveryCodes: codes }
  })
}

/** Turns two-step verification off (the password confirms it is the person), audited as `totp.disabled`. */
export async function disableTotp(
  deps: AppDeps,
  session: ConsoleSession,
  password: string,
  address: string,
): Promise<boolean> {
  const now = deps.clock.now()
  const user = await repo.findUser(deps.db, session.user.id)
  if (!user || !(await verifyPassword(user.password_hash, password))) return false
  await withTx(deps.db, async (trx) => {
    await repo.updateUser(trx, user.id, {
      totp_secret_sealed: null,
      totp_enabled_at: null,
      totp_last_step: null,
      recovery_code_hashes: json([]),
      updated_at: now,
    })
    await audit(trx, actorOf(session, now), 'totp.disabled', user.id, address)
  })
  return true
}

/** Ten new recovery codes replacing the old ones (the password confirms it), audited as `recovery_codes.regenerated`. */
export async function regenerateRecoveryCodes(
  deps: AppDeps,
  session: ConsoleSession,
  password: string,
  address: string,
): Promise<string[] | null> {
  const now = deps.clock.now()
  const user = await repo.findUser(deps.db, session.user.id)
  if (
    !user ||
    user.totp_enabled_at === null ||
    !(await verifyPassword(user.password_hash, password))
  )
    return null
  const { codes, hashes } = newRecoveryCodes()
  await withTx(deps.db, async (trx) => {
    await repo.setRecoveryCodes(trx, user.id, hashes, now)
    await audit(trx, actorOf(session, now), 'recovery_codes.regenerated', user.id, address)
  })
  return codes
}

/** How many unused recovery codes the person has left. */
export async function recoveryCodesLeft(deps: AppDeps, session: ConsoleSession): Promise<number> {
  const user = await repo.findUser(deps.db, session.user.id)
  return user?.recovery_code_hashes.length ?? 0
}
