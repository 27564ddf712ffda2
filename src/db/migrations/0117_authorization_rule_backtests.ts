import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Backtests of authorization rules (docs/authorization-rules.md, "Backtests"): a rule replayed over the stored
 * authorizations of a window, by a job. `rule` holds the rule as it was asked of (type, scope, parameters), so that a
 * later change does not change what a pending backtest replays; `results` what the replay found once completed.
 * A rule's backtests are listed newest first along `authorization_rule_backtests_rule`.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE authorization_rule_backtests (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      rule_id text NOT NULL REFERENCES authorization_rules(id),
      rule jsonb NOT NULL,
      window_from timestamptz NOT NULL,
      window_to timestamptz NOT NULL,
      status text NOT NULL CHECK (status IN ('pending', 'completed', 'failed')),
      results jsonb,
      failure_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      completed_at timestamptz
    )`,
    `CREATE INDEX authorization_rule_backtests_rule ON authorization_rule_backtests (rule_id, id DESC)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
