import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Cards, the PIN transport keys and the audit trail of every cards:secrets use.
 * `cards_one_per_cardholder` is what makes one-card programs safe under concurrent requests.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE cards (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      program_id text NOT NULL REFERENCES programs(id),
      cardholder_id text NOT NULL,
      account_id text NOT NULL,
      processor text NOT NULL,
      form_factor text NOT NULL,
      card_type text NOT NULL,
      brand text NOT NULL,
      status text NOT NULL,
      processor_reference text,
      last4 text,
      exp_month integer,
      exp_year integer,
      embossed_name text NOT NULL,
      delivery_address jsonb NOT NULL,
      shipping jsonb,
      spending_controls jsonb NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      pin_set boolean NOT NULL DEFAULT false,
      replacement_for text,
      replacement_reason text,
      replaced_by text,
      holds_card_slot boolean NOT NULL DEFAULT false,
      issued_at timestamptz,
      closed_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX cards_scope ON cards (organization_id, environment, id DESC)`,
    `CREATE INDEX cards_cardholder ON cards (cardholder_id, id DESC)`,
    `CREATE INDEX cards_account ON cards (account_id, id DESC)`,
    `CREATE INDEX cards_expiry ON cards (exp_year, exp_month) WHERE status IN ('inactive', 'active', 'frozen')`,
    `CREATE UNIQUE INDEX cards_one_per_cardholder ON cards (program_id, cardholder_id) WHERE holds_card_slot`,
    `CREATE TABLE card_pin_keys (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      card_id text NOT NULL REFERENCES cards(id),
      program_id text NOT NULL,
      private_key_sealed text NOT NULL,
      expires_at timestamptz NOT NULL,
      spent_at timestamptz,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX card_pin_keys_expiry ON card_pin_keys (expires_at)`,
    `CREATE TABLE card_secret_audit (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      client_id text NOT NULL,
      card_id text NOT NULL,
      operation text NOT NULL,
      outcome text NOT NULL,
      request_id text NOT NULL,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX card_secret_audit_card ON card_secret_audit (card_id, id)`,
    `CREATE INDEX card_secret_audit_scope ON card_secret_audit (organization_id, environment, id)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
