import type { AppDeps } from '../../app-deps.js'
import type { Environment } from '../../config.js'
import type { Db } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import { decryptField, randomBase62, sha256Hex } from '../../lib/crypto.js'
import {
  judgeWrong,
  markedFor,
  mark,
  release,
  reserveAttempt,
  SIGN_IN_WINDOW_MS,
  type Limit,
} from './attempts.js'
import { audit, type Actor } from './audit.js'
import { hashPassword, needsRehash, passwordProblem, verifyPassword } from './passwords.js'
import * as repo from './repo.js'
import { matchTotp, recoveryCodeHash } from './totp.js'
import type { Role } from './types.js'

/** A session ends after 30 minutes without a request, and 12 hours after sign-in whatever happens. */
export const SESSION_IDLE_MS = 30 * 60 * 1000
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000
/** The TOTP step of a sign-in must follow the password within 5 minutes. */
export const SECOND_FACTOR_MS = 5 * 60 * 1000
/** `last_seen_at` is written at most once a minute per session (the idle limit is that precise). */
const TOUCH_MS = 60 * 1000
export { SIGN_IN_WINDOW_MS }
/** Wrong passwords per account, and failed steps (password or code) per address, counted over 15 minutes. */
export const ACCOUNT_FAILURE_LIMIT = 5
export const ADDRESS_FAILURE_LIMIT = 20
/** Wrong second-factor codes per person and per pending sign-in; the one that reaches it locks the code step. */
export const CODE_FAILURE_LIMIT = 5

export const TOTP_PURPOSE = 'console-totp'

/** Where a console request comes from, as its session and the audit log record it. */
export interface Visitor {
  address: string
  userAgent: string
}

/** The signed-in person as pages see them. */
export interface SessionUser {
  id: string
  email: string
  role: Role
  organizationId: string | null
  totpEnabled: boolean
}

/** A resolved session: the person, and what the session keeps (form token, selected environment). */
export interface ConsoleSession {
  tokenHash: string
  user: SessionUser
  csrfSecret: string
  environment: Environment
  createdAt: Date
}

export type SignInOutcome =
  | { kind: 'signed_in'; token: string; user: SessionUser }
  | { kind: 'second_factor'; token: string }
  | { kind: 'refused' }
  | { kind: 'rate_limited'; retryAfterSeconds: number }

/** The code step's answers: a sign-in's, and `locked` (a wrong code ended the pending sign-in, locked the step). */
export type SecondFactorOutcome =
  | SignInOutcome
  | { kind: 'expired' }
  | { kind: 'locked'; retryAfterSeconds: number }

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase().slice(0, 320)
}

function presentUser(row: repo.UserRow): SessionUser {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    organizationId: row.organization_id,
    totpEnabled: row.totp_enabled_at !== null,
  }
}

/** The environment a new session shows: sandbox when the deployment serves it, else its first. */
function defaultEnvironment(deps: AppDeps): Environment {
  return deps.config.environments.includes('sandbox') ? 'sandbox' : deps.config.environments[0]
}

/** A new random token (never one the request brought: no session fixation) and its stored row. */
async function openSession(
  db: Db,
  deps: AppDeps,
  user: repo.UserRow,
  stage: 'active' | 'second_factor',
  visitor: Visitor,
  now: Date,
): Promise<string> {
  const token = randomBase62(32)
  await repo.insertSession(db, {
    token_hash: sha256Hex(token),
    user_id: user.id,
    organization_id: user.organization_id,
    stage,
    csrf_secret: randomBase62(32),
    environment: defaultEnvironment(deps),
    created_at: now,
    last_seen_at: now,
    address: visitor.address.slice(0, 100),
    user_agent: visitor.userAgent.slice(0, 500),
  })
  return token
}

/** Opens a signed-in session for `user` and audits it, inside `trx`. */
export async function startSession(
  trx: Db,
  deps: AppDeps,
  user: repo.UserRow,
  visitor: Visitor,
  now: Date,
  action = 'session.signed_in',
): Promise<string> {
  const token = await openSession(trx, deps, user, 'active', visitor, now)
  await audit(
    trx,
    { userId: user.id, organizationId: user.organization_id, now },
    action,
    user.id,
    visitor.address,
  )
  return token
}

const accountKey = (email: string) => `account:${sha256Hex(normalizeEmail(email))}`
const addressKey = (address: string) => `address:${address}`
const codeKey = (userId: string) => `code:${userId}`
const pendingKey = (tokenHash: string) => `pending:${tokenHash}`
const codeLockKey = (userId: string) => `code-lock:${userId}`

const addressLimit = (visitor: Visitor): Limit => ({
  key: addressKey(visitor.address),
  max: ADDRESS_FAILURE_LIMIT,
})

/**
 * The password step of a sign-in. An unknown email, a person without a password yet and a wrong password are
 * one answer (`refused`), and each runs one argon2id verification, so neither the page nor the time tells them
 * apart. Each attempt is reserved per account (the email, known or not) and per address before the password is
 * checked; past a limit the answer is `rate_limited` and nothing is checked. A right password clears the
 * account's wrong passwords (never its wrong codes: those count on their own).
 */
export async function signIn(
  deps: AppDeps,
  input: { email: string; password: string },
  visitor: Visitor,
): Promise<SignInOutcome> {
  const now = deps.clock.now()
  const email = normalizeEmail(input.email)
  const limits = [{ key: accountKey(email), max: ACCOUNT_FAILURE_LIMIT }, addressLimit(visitor)]
  const reserved = await reserveAttempt(deps.db, limits, now)
  if (!reserved.ok) return { kind: 'rate_limited', retryAfterSeconds: reserved.retryAfterSeconds }
  const user = email ? await repo.findUserByEmail(deps.db, email) : undefined
  const ok = await verifyPassword(user?.password_hash ?? null, input.password)
  if (!user || !ok) {
    deps.log.info({ address: visitor.address }, 'console sign-in refused')
    return { kind: 'refused' }
  }
  await release(deps.db, reserved)
  await repo.clearFailures(deps.db, accountKey(email))
  if (needsRehash(user.password_hash!))
    await repo.updateUser(deps.db, user.id, {
      password_hash: await hashPassword(input.password),
      updated_at: now,
    })
  if (user.totp_enabled_at !== null)
    return {
      kind: 'second_factor',
      token: await openSession(deps.db, deps, user, 'second_factor', visitor, now),
    }
  const token = await withTx(deps.db, (trx) => startSession(trx, deps, user, visitor, now))
  return { kind: 'signed_in', token, user: presentUser(user) }
}

/** A sign-in past its password, waiting for its code: the pending session's token digest, and whose it is. */
export interface PendingSignIn {
  tokenHash: string
  userId: string
}

/** A session in its second-factor step, when it is still within its 5 minutes; else null. */
export async function findSecondFactorSession(
  deps: AppDeps,
  token: string,
): Promise<PendingSignIn | null> {
  const row = await repo.findSession(deps.db, sha256Hex(token))
  if (!row || row.stage !== 'second_factor') return null
  if (deps.clock.now().getTime() - row.created_at.getTime() > SECOND_FACTOR_MS) {
    await repo.deleteSession(deps.db, row.token_hash)
    return null
  }
  return { tokenHash: row.token_hash, userId: row.user_id }
}

/**
 * The second step: a 6-digit code of the person's authenticator (each accepted once) or one of their recovery
 * codes (each works once). On success the pending session is replaced by a new signed-in one (a new token).
 *
 * Wrong codes count on their own, per person and per pending sign-in (and per address with wrong passwords);
 * only a completed sign-in clears the person's. Each attempt is reserved before the code is checked. The wrong
 * code that reaches 5 ends the pending sign-in and locks the person's code step for 15 minutes (`locked`); while
 * it is locked every code, the right one included, answers `rate_limited`.
 */
export async function completeSecondFactor(
  deps: AppDeps,
  pendingToken: string,
  code: string,
  visitor: Visitor,
): Promise<SecondFactorOutcome> {
  const now = deps.clock.now()
  const pending = await findSecondFactorSession(deps, pendingToken)
  if (!pending) return { kind: 'expired' }
  const user = await repo.findUser(deps.db, pending.userId)
  if (!user || user.totp_enabled_at === null || user.totp_secret_sealed === null)
    return { kind: 'expired' }
  const locked = await markedFor(deps.db, codeLockKey(user.id), now)
  if (locked !== null) return { kind: 'rate_limited', retryAfterSeconds: locked }
  const codeLimits = [codeKey(user.id), pendingKey(pending.tokenHash)].map((key) => ({
    key,
    max: CODE_FAILURE_LIMIT,
  }))
  const reserved = await reserveAttempt(deps.db, [...codeLimits, addressLimit(visitor)], now)
  if (!reserved.ok) {
    const lockedMeanwhile = await markedFor(deps.db, codeLockKey(user.id), now)
    return {
      kind: 'rate_limited',
      retryAfterSeconds: Math.max(reserved.retryAfterSeconds, lockedMeanwhile ?? 0),
    }
  }
  const token = await withTx(deps.db, (trx) =>
    spendCode(trx, deps, pending, code.trim(), visitor, now),
  )
  if (token === null) {
    const judged = await judgeWrong(
      deps.db,
      reserved,
      codeLimits.map((l) => l.key),
    )
    if (judged < CODE_FAILURE_LIMIT) return { kind: 'refused' }
    await mark(deps.db, codeLockKey(user.id), now)
    await repo.deleteSession(deps.db, pending.tokenHash)
    deps.log.info({ address: visitor.address }, 'console code step locked after wrong codes')
    return { kind: 'locked', retryAfterSeconds: SIGN_IN_WINDOW_MS / 1000 }
  }
  await release(deps.db, reserved)
  await repo.clearFailures(deps.db, codeKey(user.id))
  return { kind: 'signed_in', token, user: presentUser(user) }
}

/**
 * Checks `typed` under the person's row lock and, when it is a current code not used before or an unused
 * recovery code, spends it and swaps the pending session for a signed-in one (its token); else null.
 */
async function spendCode(
  trx: Db,
  deps: AppDeps,
  pending: PendingSignIn,
  typed: string,
  visitor: Visitor,
  now: Date,
): Promise<string | null> {
  const { userId, tokenHash } = pending
  const locked = (await repo.lockUser(trx, userId))!
  const secret = Buffer.from(
    decryptField(deps.config.masterKey, TOTP_PURPOSE, locked.totp_secret_sealed!),
    'base64',
  )
  let action = 'session.signed_in'
  if (/^\d{6}$/.test(typed)) {
    const step = matchTotp(
      secret,
      typed,
      now,
      locked.totp_last_step === null ? null : Number(locked.totp_last_step),
    )
    if (step === null) return null
    await repo.updateUser(trx, userId, { totp_last_step: step, updated_at: now })
  } else {
    const hash = recoveryCodeHash(typed)
    const left = locked.recovery_code_hashes.filter((h) => h !== hash)
    if (left.length === locked.recovery_code_hashes.length) return null
    await repo.setRecoveryCodes(trx, userId, left, now)
    action = 'session.signed_in_with_recovery_code'
  }
  await repo.deleteSession(trx, tokenHash)
  return startSession(trx, deps, locked, visitor, now, action)
}

/**
 * The signed-in session of a cookie's token, or null: unknown, still in its second-factor step, idle for 30
 * minutes or signed in 12 hours ago (an expired row is deleted at once). A used session's `last_seen_at` moves.
 */
export async function resolveSession(deps: AppDeps, token: string): Promise<ConsoleSession | null> {
  const now = deps.clock.now()
  const row = await repo.findSession(deps.db, sha256Hex(token))
  if (!row || row.stage !== 'active') return null
  const idle = now.getTime() - row.last_seen_at.getTime() > SESSION_IDLE_MS
  const old = now.getTime() - row.created_at.getTime() > SESSION_ABSOLUTE_MS
  if (idle || old) {
    await repo.deleteSession(deps.db, row.token_hash)
    return null
  }
  const user = await repo.findUser(deps.db, row.user_id)
  if (!user) return null
  if (now.getTime() - row.last_seen_at.getTime() > TOUCH_MS)
    await repo.updateSession(deps.db, row.token_hash, { last_seen_at: now })
  const environment = deps.config.environments.includes(row.environment as Environment)
    ? (row.environment as Environment)
    : defaultEnvironment(deps)
  return {
    tokenHash: row.token_hash,
    user: presentUser(user),
    csrfSecret: row.csrf_secret,
    environment,
    createdAt: row.created_at,
  }
}

/** Signing out ends every session of the person (every browser they signed in with), audited. */
export async function signOut(
  deps: AppDeps,
  session: ConsoleSession,
  address: string,
): Promise<void> {
  const now = deps.clock.now()
  await withTx(deps.db, async (trx) => {
    await repo.deleteUserSessions(trx, session.user.id)
    await audit(trx, actorOf(session, now), 'session.signed_out', session.user.id, address)
  })
}

/** The environment the organization pages show from now on (only one the deployment serves). */
export async function switchEnvironment(
  deps: AppDeps,
  session: ConsoleSession,
  environment: string,
): Promise<boolean> {
  if (!deps.config.environments.includes(environment as Environment)) return false
  await repo.updateSession(deps.db, session.tokenHash, { environment })
  return true
}

export type PasswordChange =
  | { kind: 'wrong_password' }
  | { kind: 'weak'; message: string }
  | { kind: 'changed'; token: string }

/**
 * Changes the person's password: the current one must be given, the new one pass the rules. Every session of
 * theirs ends (other browsers signed in with the old password are out); this browser gets a new session.
 */
export async function changePassword(
  deps: AppDeps,
  session: ConsoleSession,
  input: { current: string; next: string },
  visitor: Visitor,
): Promise<PasswordChange> {
  const now = deps.clock.now()
  const user = await repo.findUser(deps.db, session.user.id)
  if (!user || !(await verifyPassword(user.password_hash, input.current)))
    return { kind: 'wrong_password' }
  const problem = passwordProblem(input.next, user.email)
  if (problem) return { kind: 'weak', message: problem }
  const hash = await hashPassword(input.next)
  const token = await withTx(deps.db, async (trx) => {
    await repo.updateUser(trx, user.id, {
      password_hash: hash,
      password_changed_at: now,
      updated_at: now,
    })
    await repo.deleteUserSessions(trx, user.id)
    await audit(trx, actorOf(session, now), 'password.changed', user.id, visitor.address)
    return openSession(trx, deps, user, 'active', visitor, now)
  })
  return { kind: 'changed', token }
}

/** The audit actor of a signed-in person at `now`. */
export function actorOf(session: ConsoleSession, now: Date): Actor {
  return { userId: session.user.id, organizationId: session.user.organizationId, now }
}
