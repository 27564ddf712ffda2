import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * The documents every decision writes are compressed with lz4 instead of PostgreSQL's default pglz: an authorization
 * with ten rules' results (`rule_results`, and again in `request_history`) and its `authorization.created` event pass
 * the 2 KB at which PostgreSQL compresses a row's largest values, and pglz cost a batch's write under ten rules a
 * card about a sixth of its PostgreSQL time (docs/authorization-rules.md, "In the decision"). Only new values are
 * compressed so; existing ones stay as they are, and both read alike. A server without lz4 (the embedded database,
 * or PostgreSQL before 14, which cannot name a method) keeps pglz.
 */
const COLUMNS: [string, string][] = [
  ['authorizations', 'request_history'],
  ['authorizations', 'rule_results'],
  ['authorizations', 'rule_counters'],
  ['events', 'data'],
  ['idempotency_keys', 'response_json'],
]

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(
    db,
    COLUMNS.map(
      ([table, column]) => `DO $$ BEGIN
        ALTER TABLE ${table} ALTER COLUMN ${column} SET COMPRESSION lz4;
      EXCEPTION WHEN feature_not_supported OR syntax_error THEN NULL;
      END $$`,
    ),
  )
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
