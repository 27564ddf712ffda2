import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * The people of the management console (owned by the users module): members of an organization and platform
 * operators, their invitations, their console sessions, the sign-in failures that rate-limit guessing, and the
 * audit log of every console action that changes something. Secrets are stored only as digests (session and
 * invitation tokens, recovery codes), as an argon2id hash (passwords) or sealed under the master key (TOTP).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL,
      organization_id text REFERENCES organizations(id),
      role text NOT NULL CHECK (role IN ('owner', 'developer', 'viewer', 'operator')),
      password_hash text,
      password_changed_at timestamptz,
      totp_secret_sealed text,
      totp_enabled_at timestamptz,
      totp_last_step bigint,
      recovery_code_hashes jsonb NOT NULL DEFAULT '[]',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      CONSTRAINT users_operator_has_no_organization CHECK ((role = 'operator') = (organization_id IS NULL))
    )`,
    `CREATE UNIQUE INDEX users_email ON users (lower(email))`,
    `CREATE INDEX users_organization ON users (organization_id, id)`,
    `CREATE TABLE user_invitations (
      id text PRIMARY KEY,
      token_hash text NOT NULL UNIQUE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      invited_by text REFERENCES users(id) ON DELETE SET NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX user_invitations_user ON user_invitations (user_id)`,
    `CREATE INDEX user_invitations_expiry ON user_invitations (expires_at)`,
    `CREATE TABLE console_sessions (
      token_hash text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      organization_id text,
      stage text NOT NULL CHECK (stage IN ('active', 'second_factor')),
      csrf_secret text NOT NULL,
      environment text NOT NULL,
      created_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL,
      address text NOT NULL,
      user_agent text NOT NULL
    )`,
    `CREATE INDEX console_sessions_user ON console_sessions (user_id)`,
    `CREATE INDEX console_sessions_last_seen ON console_sessions (last_seen_at)`,
    `CREATE TABLE console_sign_in_failures (
      key text NOT NULL,
      at timestamptz NOT NULL
    )`,
    `CREATE INDEX console_sign_in_failures_key ON console_sign_in_failures (key, at)`,
    `CREATE TABLE audit_log (
      id text PRIMARY KEY,
      actor_user_id text,
      organization_id text,
      action text NOT NULL,
      object_id text,
      at timestamptz NOT NULL,
      address text
    )`,
    `CREATE INDEX audit_log_organization ON audit_log (organization_id, id DESC)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
