import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { randomBase62, sha256Hex } from '../../lib/crypto.js'
import { newId } from '../../lib/ids.js'
import { audit, type Actor } from './audit.js'
import { hashPassword, passwordProblem } from './passwords.js'
import * as repo from './repo.js'
import { normalizeEmail, startSession, type Visitor } from './sessions.js'
import { MEMBER_ROLES, type MemberRole, type Role } from './types.js'

/** An invitation link works for 72 hours, once. */
export const INVITATION_TTL_MS = 72 * 60 * 60 * 1000

/** What the operator API answers (and the console shows once): the link carries the only copy of the token. */
export interface InvitationView {
  object: 'user_invitation'
  id: string
  user_id: string
  email: string
  role: Role
  organization_id: string | null
  url: string
  expires_at: string
  created_at: string
}

export interface InviteInput {
  email: string
  role: Role
  /** The member's organization; null (and role `operator`) for a platform operator. */
  organizationId: string | null
}

const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/

export function invitationUrl(deps: AppDeps, token: string): string {
  return `${deps.config.baseUrl}/console/invitations/${token}`
}

/**
 * Invites a person: creates them (without a password) or, when they were invited before and never set a
 * password, gives them the role again and retires their older links. The answer's `url` is the one-time link
 * that sets the password. A person who can already sign in, or who belongs to another organization, is refused
 * (`user_already_exists`). Audited as `user.invited` in the same transaction, under the invited organization.
 */
export async function inviteUser(
  deps: AppDeps,
  input: InviteInput,
  actor: Actor,
  address: string | null,
): Promise<InvitationView> {
  const email = normalizeEmail(input.email)
  if (!EMAIL.test(email) || email.length > 254)
    throw new ApiError('invalid_parameter', {
      param: 'email',
      message: 'email must be an email address.',
    })
  const operator = input.role === 'operator'
  if (!operator && !MEMBER_ROLES.includes(input.role as MemberRole))
    throw new ApiError('invalid_parameter', {
      param: 'role',
      message: 'role must be owner, developer, viewer or operator.',
    })
  if (operator && input.organizationId !== null)
    throw new ApiError('invalid_parameter', {
      param: 'organization_id',
      message: 'An operator belongs to no organization: omit organization_id.',
    })
  if (!operator && input.organizationId === null)
    throw new ApiError('missing_parameter', {
      param: 'organization_id',
      message: 'organization_id is required for an organization member.',
    })
  const now = actor.now
  const token = randomBase62(32)
  const id = newId('inv', now)
  const expiresAt = new Date(now.getTime() + INVITATION_TTL_MS)
  const user = await withTx(deps.db, async (trx) => {
    let row = await repo.findUserByEmail(trx, email)
    if (row && (row.password_hash !== null || row.organization_id !== input.organizationId)) {
      throw new ApiError('user_already_exists', {
        param: 'email',
        message: 'This email already has a console account.',
      })
    }
    if (row) {
      await repo.updateUser(trx, row.id, { role: input.role, updated_at: now })
      await repo.retireInvitations(trx, row.id, now)
    } else {
      row = await repo.insertUser(trx, {
        id: newId('usr', now),
        email,
        organization_id: input.organizationId,
        role: input.role,
        password_hash: null,
        password_changed_at: null,
        totp_secret_sealed: null,
        totp_enabled_at: null,
        totp_last_step: null,
        recovery_code_hashes: '[]',
        created_at: now,
        updated_at: now,
      })
    }
    await repo.insertInvitation(trx, {
      id,
      token_hash: sha256Hex(token),
      user_id: row.id,
      invited_by: actor.userId,
      expires_at: expiresAt,
      used_at: null,
      created_at: now,
    })
    await audit(
      trx,
      { ...actor, organizationId: input.organizationId },
      'user.invited',
      row.id,
      address,
    )
    return row
  })
  return {
    object: 'user_invitation',
    id,
    user_id: user.id,
    email,
    role: input.role,
    organization_id: input.organizationId,
    url: invitationUrl(deps, token),
    expires_at: iso(expiresAt)!,
    created_at: iso(now)!,
  }
}

/** The person an invitation link is for, while the link is unused and unexpired; else null (one answer for every other case). */
export async function findInvitation(
  deps: AppDeps,
  token: string,
): Promise<{ email: string; role: Role } | null> {
  if (!/^[A-Za-z0-9]{20,64}$/.test(token)) return null
  const invitation = await repo.findInvitationByTokenHash(deps.db, sha256Hex(token))
  if (
    !invitation ||
    invitation.used_at !== null ||
    invitation.expires_at.getTime() <= deps.clock.now().getTime()
  )
    return null
  const user = await repo.findUser(deps.db, invitation.user_id)
  return user ? { email: user.email, role: user.role } : null
}

export type Acceptance =
  | { kind: 'invalid' }
  | { kind: 'weak'; message: string }
  | { kind: 'accepted'; token: string }

/**
 * Sets the invited person's password through the link, spends the link, and signs them in (a new session;
 * any earlier session of theirs ends). Audited as `invitation.accepted`.
 */
export async function acceptInvitation(
  deps: AppDeps,
  token: string,
  password: string,
  visitor: Visitor,
): Promise<Acceptance> {
  const invited = await findInvitation(deps, token)
  if (!invited) return { kind: 'invalid' }
  const problem = passwordProblem(password, invited.email)
  if (problem) return { kind: 'weak', message: problem }
  const hash = await hashPassword(password)
  const now = deps.clock.now()
  const session = await withTx(deps.db, async (trx) => {
    const invitation = await repo.findInvitationByTokenHash(trx, sha256Hex(token), true)
    if (
      !invitation ||
      invitation.used_at !== null ||
      invitation.expires_at.getTime() <= now.getTime()
    )
      return null
    const user = (await repo.lockUser(trx, invitation.user_id))!
    await repo.markInvitationUsed(trx, invitation.id, now)
    await repo.retireInvitations(trx, user.id, now)
    await repo.updateUser(trx, user.id, {
      password_hash: hash,
      password_changed_at: now,
      updated_at: now,
    })
    await repo.deleteUserSessions(trx, user.id)
    return startSession(trx, deps, user, visitor, now, 'invitation.accepted')
  })
  return session === null ? { kind: 'invalid' } : { kind: 'accepted', token: session }
}
