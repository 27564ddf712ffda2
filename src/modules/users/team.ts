import type { AppDeps } from '../../app-deps.js'
import { type Actor } from './audit.js'
import { inviteUser, type InvitationView } from './invitations.js'
import * as repo from './repo.js'
import { normalizeEmail } from './sessions.js'
import type { MemberRole, Role } from './types.js'

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
  return rows.map((r) => ({ id: r.id, email: r.email, role: r.role, status: r.password_hash === null ? 'invited' : 'active', twoStep: r.totp_enabled_at !== null, createdAt: r.created_at }))
}

/** An owner invites a teammate into their own organization (the console's Team page; the same rules as the operator API). */
export function inviteTeammate(deps: AppDeps, owner: Actor & { organizationId: string }, input: { email: string; role: MemberRole }, address: string): Promise<InvitationView> {
  return inviteUser(deps, { email: input.email, role: input.role, organizationId: owner.organizationId }, owner, address)
}

/** What `npm start` prints for the demo owner: a fresh one-time link while they have no password, else the sign-in page. */
export type DemoSignIn = { kind: 'invitation'; email: string; url: string; expiresAt: string } | { kind: 'sign_in'; email: string; url: string }

/**
 * Makes sure the demo organization has its owner (`email`) and says how to get in: each start while the owner
 * has set no password issues a new invitation link (the previous one stops working); afterwards the sign-in URL.
 */
export async function demoOwnerSignIn(deps: AppDeps, organizationId: string, email: string): Promise<DemoSignIn> {
  const existing = await repo.findUserByEmail(deps.db, normalizeEmail(email))
  if (existing && (existing.password_hash !== null || existing.organization_id !== organizationId)) {
    return { kind: 'sign_in', email: existing.email, url: `${deps.config.baseUrl}/console/sign-in` }
  }
  const invitation = await inviteUser(deps, { email, role: 'owner', organizationId }, { userId: null, organizationId: null, now: deps.clock.now() }, null)
  return { kind: 'invitation', email: invitation.email, url: invitation.url, expiresAt: invitation.expires_at }
}
