import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE organizations (
      id text PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE TABLE programs (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      name text NOT NULL,
      processor text NOT NULL,
      currencies jsonb NOT NULL,
      form_factors jsonb NOT NULL,
      card_types jsonb NOT NULL,
      card_brand text NOT NULL,
      capabilities jsonb NOT NULL,
      kyc_initial_status text NOT NULL,
      one_card_per_cardholder boolean NOT NULL,
      identity_evidence_required boolean NOT NULL,
      address_change_requires_kyc boolean NOT NULL,
      bin text NOT NULL,
      pin_key_configured boolean NOT NULL DEFAULT true,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX programs_org_env ON programs (organization_id, environment, id)`,
    `CREATE TABLE oauth_clients (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      label text NOT NULL,
      scopes jsonb NOT NULL,
      jwks jsonb NOT NULL,
      ip_allowlist jsonb,
      status text NOT NULL DEFAULT 'active',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`,
    `CREATE TABLE oauth_jtis (
      client_id text NOT NULL,
      jti text NOT NULL,
      expires_at timestamptz NOT NULL,
      PRIMARY KEY (client_id, jti)
    )`,
    `CREATE INDEX oauth_jtis_expiry ON oauth_jtis (expires_at)`,
    `CREATE TABLE access_tokens (
      token_hash text PRIMARY KEY,
      client_id text NOT NULL REFERENCES oauth_clients(id),
      organization_id text NOT NULL,
      environment text NOT NULL,
      scopes jsonb NOT NULL,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX access_tokens_expiry ON access_tokens (expires_at)`,
    `CREATE TABLE network_policies (
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      ip_allowlist jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, environment)
    )`,
    `CREATE TABLE idempotency_keys (
      organization_id text NOT NULL,
      environment text NOT NULL,
      key text NOT NULL,
      method text NOT NULL,
      path text NOT NULL,
      request_hash text NOT NULL,
      state text NOT NULL,
      response_status integer,
      response_body text,
      locked_until timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, environment, key)
    )`,
    `CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
