import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import { withTx } from '../../db/tx.js'
import { ApiError } from '../../http/errors.js'
import { audit, type Actor } from './audit.js'
import { inviteUser, type InvitationView } from './invitations.js'
import * as repo from './repo.js'
import { normalizeEmail } from './sessions.js'
import { MEMBER_ROLES, type MemberRole, type Role } from './types.js'

/** A member as the team page lists them: `invited` until their link set a password. */
export interface Member {
  id: string
  email: string
  role: Role
  status: 'active' | 'invited'
  twoStep: boolean
  createdAt: Date
}

/** The organization's people, oldest first. */
export async function listTeam(deps: AppDeps, organizationId: string): Promise<Member[]> {
  const rows = await repo.listMembers(deps.db, organizationId)
  return rows.map((r) => ({
    id: r.id,
    email: r.email,
    role: r.role,
    status: r.password_hash === null ? 'invited' : 'active',
    twoStep: r.totp_enabled_at !== null,
    createdAt: r.created_at,
  }))
}

/** An owner invites a teammate into their own organization (the console's Team page; the same rules as the operator API). */
export function inviteTeammate(
  deps: AppDeps,
  owner: Actor & { organizationId: string },
  input: { email: string; role: MemberRole },
  address: string,
): Promise<InvitationView> {
  return inviteUser(
    deps,
    { email: input.email, role: input.role, organizationId: owner.organizationId },
    owner,
    address,
  )
}

type Owner = Actor & { organizationId: string }

/** A member of the owner's organization, locked; another organization's person or an operator is `user_not_found`. */
async function lockMember(trx: Db, owner: Owner, userId: string): Promise<repo.UserRow> {
  const row = await repo.lockUser(trx, userId)
  if (!row || row.organization_id !== owner.organizationId)
    throw new ApiError('user_not_found', { param: 'user_id' })
  return row
}

/** Refuses a change that would leave the organization without an owner who can sign in. */
async function keepAnOwner(trx: Db, owner: Owner, changing: repo.UserRow): Promise<void> {
  if (changing.role !== 'owner' || changing.password_hash === null) return
  const owners = await repo.lockActiveOwners(trx, owner.organizationId)
  if (owners.every((o) => o.id === changing.id))
    throw new ApiError('last_owner', { param: 'user_id' })
}

/**
 * An owner gives a member (or a pending invitee) another role. The role is read on every request, so it holds from
 * the member's next click; the organization always keeps an owner who can sign in. Audited as `user.role_changed`.
 */
export async function changeMemberRole(
  deps: AppDeps,
  owner: Owner,
  userId: string,
  role: MemberRole,
  address: string,
): Promise<void> {
  if (!MEMBER_ROLES.includes(role))
    throw new ApiError('invalid_parameter', {
      param: 'role',
      message: 'role must be owner, developer or viewer.',
    })
  await withTx(deps.db, async (trx) => {
    const member = await lockMember(trx, owner, userId)
    if (member.role === role) return
    if (role !== 'owner') await keepAnOwner(trx, owner, member)
    await repo.updateUser(trx, member.id, { role, updated_at: owner.now })
    await audit(trx, owner, 'user.role_changed', member.id, address)
  })
}

/**
 * An owner removes a member, or revokes a pending invitation (the invitee, who never set a password, goes with
 * their links). Their sessions end at once; the audit log keeps what they did. The last owner stays.
 * Audited as `user.removed` or `invitation.revoked`.
 */
export async function removeMember(
  deps: AppDeps,
  owner: Owner,
  userId: string,
  address: string,
): Promise<'removed' | 'revoked'> {
  return withTx(deps.db, async (trx) => {
    const member = await lockMember(trx, owner, userId)
    await keepAnOwner(trx, owner, member)
    await repo.deleteUser(trx, member.id)
    const outcome = member.password_hash === null ? 'revoked' : 'removed'
    await audit(
      trx,
      owner,
      outcome === 'revoked' ? 'invitation.revoked' : 'user.removed',
      member.id,
      address,
    )
    return outcome
  })
}

/** What `npm start` prints for the demo owner: a fresh one-time link while they have no password, else the sign-in page. */
export type DemoSignIn =
  | { kind: 'invitation'; email: string; url: string; expiresAt: string }
  | { kind: 'sign_in'; email: string; url: string }

/**
 * Makes sure the demo organization has its owner (`email`) and says how to get in: each start while the owner
 * has set no password issues a new invitation link (the previous one stops working); afterwards the sign-in URL.
 */
export async function demoOwnerSignIn(
  deps: AppDeps,
  organizationId: string,
  email: string,
): Promise<DemoSignIn> {
  const existing = await repo.findUserByEmail(deps.db, normalizeEmail(email))
  if (
    existing &&
    (existing.password_hash !== null || existing.organization_id !== organizationId)
  ) {
    return { kind: 'sign_in', email: existing.email, url: `${deps.config.baseUrl}/console/sign-in` }
  }
  const invitation = await inviteUser(
    deps,
    { email, role: 'owner', organizationId },
    { userId: null, organizationId: null, now: deps.clock.now() },
    null,
  )
  return {
    kind: 'invitation',
    email: invitation.email,
    url: invitation.url,
    expiresAt: invitation.expires_at,
  }
}
