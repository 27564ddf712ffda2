import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Travel mode on a card (docs/cards.md, "Travel mode"): the eSIM it follows (`travel_esim_id`), and a copy of that
 * eSIM's current country and of when its bundle stops being valid (`travel_valid_until`: null while it is suspended or
 * canceled). The copy is written by the eSIM's own changes, in their transaction, so the authorization decision reads
 * it with the card's other columns, in its one statement (docs/decisions/card-travel-mode.md). The partial index finds
 * the cards that follow an eSIM when it moves; cards without travel mode are not in it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE cards ADD COLUMN travel_esim_id text',
    'ALTER TABLE cards ADD COLUMN travel_country text',
    'ALTER TABLE cards ADD COLUMN travel_valid_until timestamptz',
    'CREATE INDEX cards_travel_esim ON cards (travel_esim_id) WHERE travel_esim_id IS NOT NULL',
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
