import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * What each authorization rule names, one row per id (docs/authorization-rules.md, "In the decision"):
 * `authorization_rule_targets` (authorization-rules module) holds a row per id of a live rule's `scope_ids`
 * (`excluded` false) and of its `exclude_ids` (`excluded` true), written with the rule's creation and deleted with
 * the rule (a rule's scope never changes). The decision finds the rules of a card by its four ids (program, account,
 * cardholder, card) along the primary key, instead of four GIN probes of `authorization_rules.scope_ids` and a test
 * of every exclusion list of the tenant. Filled here from the live rules.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE authorization_rule_targets (
      target_id text NOT NULL,
      rule_id text NOT NULL,
      excluded boolean NOT NULL,
      PRIMARY KEY (target_id, rule_id) INCLUDE (excluded)
    )`,
    `CREATE INDEX authorization_rule_targets_rule ON authorization_rule_targets (rule_id)`,
    `INSERT INTO authorization_rule_targets (target_id, rule_id, excluded)
      SELECT t.id, r.id, t.excluded FROM authorization_rules AS r,
        LATERAL (SELECT s.id, false AS excluded FROM jsonb_array_elements_text(r.scope_ids) AS s(id)
          UNION ALL SELECT x.id, true FROM jsonb_array_elements_text(r.exclude_ids) AS x(id)) AS t
      WHERE r.deleted_at IS NULL
      ON CONFLICT DO NOTHING`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
