import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * An authorization in another currency than its account's (authorizations module; docs/fx.md): `amount` and
 * `currency` stay the account's (what is held and debited); `merchant_amount` and `merchant_currency` are what the
 * merchant asked, and `fx` the conversion (`{rate, markup_bps, fee_amount, source, rate_at}`), null when the two
 * currencies are equal. The authorizations that exist were all in their account's currency: they take their own
 * amount and currency, and no conversion.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE authorizations ADD COLUMN merchant_amount bigint`,
    `ALTER TABLE authorizations ADD COLUMN merchant_currency text`,
    `ALTER TABLE authorizations ADD COLUMN fx jsonb`,
    `UPDATE authorizations SET merchant_amount = amount, merchant_currency = currency`,
    `ALTER TABLE authorizations ALTER COLUMN merchant_amount SET NOT NULL`,
    `ALTER TABLE authorizations ALTER COLUMN merchant_currency SET NOT NULL`,
    `ALTER TABLE authorizations ADD CONSTRAINT authorizations_merchant_amount_positive CHECK (merchant_amount > 0)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
