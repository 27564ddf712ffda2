import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Authorizations, approved and declined alike. `authorizations_card_spend` answers the windowed spending-limit
 * sums (approved authorizations of one card since a window start) from the index alone in the common case;
 * `authorizations_expiry` finds holds past their 7 days.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE authorizations (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      program_id text NOT NULL,
      card_id text NOT NULL,
      account_id text NOT NULL,
      network_token_id text,
      status text NOT NULL,
      approved boolean NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      held_amount bigint NOT NULL DEFAULT 0 CHECK (held_amount >= 0),
      captured_amount bigint NOT NULL DEFAULT 0 CHECK (captured_amount >= 0),
      reversed_amount bigint NOT NULL DEFAULT 0 CHECK (reversed_amount >= 0),
      currency text NOT NULL,
      merchant jsonb NOT NULL,
      decline_reason text,
      hold_id text,
      request_history jsonb NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX authorizations_scope ON authorizations (organization_id, environment, id DESC)`,
    `CREATE INDEX authorizations_card ON authorizations (card_id, id DESC)`,
    `CREATE INDEX authorizations_account ON authorizations (account_id, id DESC)`,
    `CREATE INDEX authorizations_card_spend ON authorizations (card_id, created_at) INCLUDE (held_amount, captured_amount) WHERE approved`,
    `CREATE INDEX authorizations_expiry ON authorizations (expires_at) WHERE status = 'pending'`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
