import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * A capture or refund in another currency than its account's (transactions module; docs/fx.md): `amount` and
 * `currency` stay the account's (what the ledger moved); `merchant_amount` and `merchant_currency` are the merchant's,
 * `fx` the conversion (`{rate, markup_bps, fee_amount, source, rate_at}`), null when the two currencies are equal, and
 * `merchant_refunded_amount` what refunds of a capture gave back in the merchant's currency (what a refund is judged
 * against). The transactions that exist were all in their account's currency: they take their own amounts and
 * currency, and no conversion.
 *
 * A refund converts at its own rate, so the refunds of a foreign capture may credit more than the capture debited in
 * the account's currency: `refunded_amount <= amount` holds for a capture in its account's currency only (a foreign
 * one is held to `merchant_refunded_amount <= merchant_amount`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `ALTER TABLE transactions ADD COLUMN merchant_amount bigint`,
    `ALTER TABLE transactions ADD COLUMN merchant_refunded_amount bigint`,
    `ALTER TABLE transactions ADD COLUMN merchant_currency text`,
    `ALTER TABLE transactions ADD COLUMN fx jsonb`,
    `UPDATE transactions SET merchant_amount = amount, merchant_refunded_amount = refunded_amount,
      merchant_currency = currency`,
    `ALTER TABLE transactions ALTER COLUMN merchant_amount SET NOT NULL`,
    `ALTER TABLE transactions ALTER COLUMN merchant_refunded_amount SET NOT NULL`,
    `ALTER TABLE transactions ALTER COLUMN merchant_refunded_amount SET DEFAULT 0`,
    `ALTER TABLE transactions ALTER COLUMN merchant_currency SET NOT NULL`,
    `ALTER TABLE transactions DROP CONSTRAINT transactions_check`,
    `ALTER TABLE transactions ADD CONSTRAINT transactions_refunded_amount_check
      CHECK (refunded_amount >= 0 AND (refunded_amount <= amount OR merchant_currency <> currency))`,
    `ALTER TABLE transactions ADD CONSTRAINT transactions_merchant_amount_check
      CHECK (merchant_amount > 0 AND merchant_refunded_amount >= 0 AND merchant_refunded_amount <= merchant_amount)`,
    `ALTER TABLE transactions ADD CONSTRAINT transactions_same_currency_check
      CHECK (merchant_currency <> currency OR (fx IS NULL AND merchant_amount = amount
        AND merchant_refunded_amount = refunded_amount))`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
