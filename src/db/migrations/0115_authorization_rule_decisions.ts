import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Authorization decisions apply the authorization rules (docs/authorization-rules.md, "In the decision").
 *
 * - `authorizations.rule_results`: what each rule that applied said of the authorization's latest request
 *   (`[{rule_id, mode, outcome}]`, `[]` when none applied or the decision stopped before the rules); `rule_id` the
 *   active rule that declined it (`decline_reason` `rule_declined`). The authorizations that exist were decided
 *   without rules.
 * - `authorization_rule_activity` (authorization-rules module): a card's authorizations of its last hour, approved and
 *   declined, in minute buckets (`{"<minute start, epoch seconds>": [approved, declined]}`), for the conditions on
 *   `authorization_count_1h` and `decline_count_1h`: kept only for cards a rule reading them applies to, written by
 *   the decision's own statement, so that no decision counts the card's history.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE authorizations ADD COLUMN rule_results jsonb NOT NULL DEFAULT '[]'::jsonb`,
    `ALTER TABLE authorizations ADD COLUMN rule_id text`,
    `CREATE TABLE authorization_rule_activity (
      card_id text PRIMARY KEY,
      buckets jsonb NOT NULL CHECK (jsonb_typeof(buckets) = 'object'),
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX authorization_rule_activity_updated ON authorization_rule_activity (updated_at)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
