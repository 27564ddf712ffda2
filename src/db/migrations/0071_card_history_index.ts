import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * One index per card's authorizations instead of two. `authorizations_card` (card id, id) served the list
 * filter and `authorizations_card_spend` (card id, created_at, approved only) the spending-limit sums, so every
 * decision wrote two entries keyed on the card. Ids sort by creation time and an authorization's id is made
 * from its `created_at` (never earlier), so a window starting at T holds only ids at or above the lowest id of
 * T: the sums now read the same (card id, id) index from that id on, with `approved`, `created_at` and the
 * amounts included so they are still answered from the index alone.
 *
 * `events_created` is dropped too: the 30-day purge was its only reader, and it now walks the primary key
 * up to the lowest id of the cutoff instead (event ids sort by creation time).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE INDEX authorizations_card_history ON authorizations (card_id, id DESC) INCLUDE (approved, created_at, held_amount, captured_amount)`,
    `DROP INDEX IF EXISTS authorizations_card`,
    `DROP INDEX IF EXISTS authorizations_card_spend`,
    `ALTER INDEX authorizations_card_history RENAME TO authorizations_card`,
    `DROP INDEX IF EXISTS events_created`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
