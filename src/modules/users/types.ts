import type { Json, Timestamp } from '../../db/types.js'

/** What a person may do in the console: `owner` (all, team included), `developer` (all but the team), `viewer` (read only), `operator` (the platform's pages, no organization). */
export type Role = 'owner' | 'developer' | 'viewer' | 'operator'
export const ROLES: readonly Role[] = ['owner', 'developer', 'viewer', 'operator']
/** The roles of an organization's members (an operator belongs to none). */
export type MemberRole = Exclude<Role, 'operator'>
export const MEMBER_ROLES: readonly MemberRole[] = ['owner', 'developer', 'viewer']

/** A person who signs in to the console. `password_hash` is null until an invitation link set it. */
export interface UsersTable {
  id: string
  /** Stored lower case; unique case-insensitively (index on lower(email)). */
  email: string
  /** Null for platform operators. */
  organization_id: string | null
  role: Role
  /** argon2id PHC string: the algorithm's parameters are recorded in it. */
  password_hash: string | null
  password_changed_at: Timestamp | null
  /** The TOTP secret sealed under the master key; set (not yet enabled) while enrolment awaits its first code. */
  totp_secret_sealed: string | null
  totp_enabled_at: Timestamp | null
  /** The last 30-second step whose code was accepted: a code is accepted once. */
  totp_last_step: string | number | null
  /** SHA-256 of each unused recovery code; a used one is removed. */
  recovery_code_hashes: Json<string[]>
  created_at: Timestamp
  updated_at: Timestamp
}

/** A one-time link that sets a person's password (72 hours, used once). Only the token's SHA-256 is kept. */
export interface UserInvitationsTable {
  id: string
  token_hash: string
  user_id: string
  /** The owner who invited; null when the operator API did. */
  invited_by: string | null
  expires_at: Timestamp
  used_at: Timestamp | null
  created_at: Timestamp
}

/**
 * A signed-in browser. `second_factor`: the password was right and the TOTP code is awaited (a short-lived row
 * that grants nothing else); `active`: signed in. Only the token's SHA-256 is kept.
 */
export interface ConsoleSessionsTable {
  token_hash: string
  user_id: string
  organization_id: string | null
  stage: 'active' | 'second_factor'
  /** The form token of every state-changing console request of this session. */
  csrf_secret: string
  /** The environment the organization pages show (the sandbox/production switch). */
  environment: string
  created_at: Timestamp
  last_seen_at: Timestamp
  address: string
  user_agent: string
}

/**
 * One failed sign-in step, or one attempt reserved and not yet judged, under one limit's key: the password by
 * account (`account:<sha256 of the email>`), wrong codes by person (`code:<usr_>`) and by pending sign-in
 * (`pending:<token hash>`), both steps by address (`address:<ip>`); `code-lock:<usr_>` marks a locked code step.
 */
export interface ConsoleSignInFailuresTable {
  key: string
  at: Timestamp
  /** The attempt whose reservation the row is (taken back when the attempt is refused or right); null: a mark. */
  attempt: string | null
}

/** Who changed what in the console, when and from where. `actor_user_id` null: the operator API. */
export interface AuditLogTable {
  id: string
  actor_user_id: string | null
  organization_id: string | null
  action: string
  object_id: string | null
  at: Timestamp
  address: string | null
}

declare module '../../db/types.js' {
  interface Database {
    users: UsersTable
    user_invitations: UserInvitationsTable
    console_sessions: ConsoleSessionsTable
    console_sign_in_failures: ConsoleSignInFailuresTable
    audit_log: AuditLogTable
  }
}
