import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * The traveller page (docs/traveller-page.md): which sections a link shows (a JSON array of `esims`,
 * `cards`, `balance`, in the page's order; links made before keep `["esims"]`, what the page showed then), the
 * account its purchases debit (null: billed to the organization), and whether its cards section may show card
 * details (the link was made by a client holding `cards:secrets`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE esim_h5_links ADD COLUMN sections jsonb NOT NULL DEFAULT '["esims"]'::jsonb`,
    'ALTER TABLE esim_h5_links ADD COLUMN pay_from_account_id text',
    'ALTER TABLE esim_h5_links ADD COLUMN card_details boolean NOT NULL DEFAULT false',
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
