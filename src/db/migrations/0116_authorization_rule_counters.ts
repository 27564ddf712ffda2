import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Velocity limits count without reading history (docs/authorization-rules.md, "Counters").
 *
 * - `authorization_rule_counters` (authorization-rules module): one row per velocity limit, counting generation and
 *   aggregate (a card, account or cardholder id), keyed `<rule id>:<generation>:<aggregate id>`, holding the window's
 *   buckets (`{"<bucket start, epoch seconds>": [amount, count]}`). Made by the decision that first needs it (empty),
 *   written by the decision statements under the row lock that makes them exact, adjusted by reversals, captures,
 *   increments and expiry. `expires_at`: when nothing it holds counts any more (null: never, an `all_time` window), the
 *   purge's key.
 * - `authorization_rules.counter_generation`: raised when a change of `window`, `aggregate` or `filters` makes what was
 *   counted mean something else; counting starts again under new keys.
 * - `authorizations.rule_counters`: the counters and buckets an approved authorization was counted in
 *   (`[[key, bucket], …]`), so that whatever later changes what it holds or captured changes them by as much.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE authorization_rule_counters (
      key text PRIMARY KEY,
      rule_id text NOT NULL,
      buckets jsonb NOT NULL CHECK (jsonb_typeof(buckets) = 'object'),
      expires_at timestamptz,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX authorization_rule_counters_expiry ON authorization_rule_counters (expires_at) WHERE expires_at IS NOT NULL`,
    `ALTER TABLE authorization_rules ADD COLUMN counter_generation integer NOT NULL DEFAULT 1`,
    `ALTER TABLE authorizations ADD COLUMN rule_counters jsonb NOT NULL DEFAULT '[]'::jsonb`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
