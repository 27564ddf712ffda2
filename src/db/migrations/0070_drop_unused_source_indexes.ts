import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * No query reads holds or ledger entries by `source_id` (entries are listed by account and sequence, and
 * reports by creation time), so the two partial indexes on it were only written: two index entries, and
 * their WAL, on every authorization's hold. The column stays, shown on every entry.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `DROP INDEX IF EXISTS holds_source`,
    `DROP INDEX IF EXISTS ledger_entries_source`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
