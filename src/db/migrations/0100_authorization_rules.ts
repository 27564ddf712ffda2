import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Authorization rules (docs/authorization-rules.md): an organization's velocity limits, conditions and merchant locks
 * on its cards, each scoped to programs, accounts, cardholders or cards (`scope_ids`, minus `exclude_ids`). A deleted
 * rule keeps its row (`deleted_at`), so the decisions and backtests that name it still find what it said; every read
 * of the API skips it.
 *
 * Lists page newest first on the scope index, live rules only. The rules that apply to one card (`?card_id=`, and the
 * decision path later) are those whose `scope_ids` hold the card, its account, its cardholder or its program: the GIN
 * index answers each `scope_ids @> '["id"]'` without reading the environment's other rules.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE authorization_rules (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      name text NOT NULL,
      scope_level text NOT NULL CHECK (scope_level IN ('program', 'account', 'cardholder', 'card')),
      scope_ids jsonb NOT NULL CHECK (jsonb_typeof(scope_ids) = 'array'),
      exclude_ids jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(exclude_ids) = 'array'),
      type text NOT NULL CHECK (type IN ('velocity_limit', 'condition', 'merchant_lock')),
      parameters jsonb NOT NULL,
      mode text NOT NULL CHECK (mode IN ('active', 'shadow')),
      status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      deleted_at timestamptz
    )`,
    `CREATE INDEX authorization_rules_scope ON authorization_rules (organization_id, environment, id DESC) WHERE deleted_at IS NULL`,
    `CREATE INDEX authorization_rules_targets ON authorization_rules USING gin (scope_ids jsonb_path_ops) WHERE deleted_at IS NULL`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
