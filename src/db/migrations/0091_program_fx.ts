import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * A program's foreign-exchange settings (programs module; decisions.md, "Spending in any currency"): whether its cards
 * may spend in another currency than their account's (`foreign_spend`), the markup on the converted amount in basis
 * points (`fx_markup_bps`, 0–1000), and whether that markup is part of the converted amount or its own ledger entry
 * (`fx_fee`). Existing programs take the defaults: allowed, no markup, included. The operator may now change a program
 * (`PATCH /operator/v1/programs/{id}`), so it gains `updated_at` (its creation time for the programs that exist).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE programs ADD COLUMN foreign_spend text NOT NULL DEFAULT 'allowed' CHECK (foreign_spend IN ('allowed', 'blocked'))`,
    `ALTER TABLE programs ADD COLUMN fx_markup_bps integer NOT NULL DEFAULT 0 CHECK (fx_markup_bps BETWEEN 0 AND 1000)`,
    `ALTER TABLE programs ADD COLUMN fx_fee text NOT NULL DEFAULT 'included' CHECK (fx_fee IN ('included', 'separate'))`,
    `ALTER TABLE programs ADD COLUMN updated_at timestamptz`,
    `UPDATE programs SET updated_at = created_at`,
    `ALTER TABLE programs ALTER COLUMN updated_at SET DEFAULT now()`,
    `ALTER TABLE programs ALTER COLUMN updated_at SET NOT NULL`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
