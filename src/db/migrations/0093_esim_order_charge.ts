import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * What an eSIM order or top-up paid from an account is charged in the account's currency (decisions.md, "Spending
 * in any currency"): `charged_amount` and `charged_currency`, and `fx` (the rate, markup, fee and source) when the
 * price's currency is another. Fixed at order time, so a settlement later debits what the order said. Orders paid
 * from an account before now were priced in its currency: they were charged their price.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    'ALTER TABLE esim_orders ADD COLUMN charged_amount bigint',
    'ALTER TABLE esim_orders ADD COLUMN charged_currency text',
    'ALTER TABLE esim_orders ADD COLUMN fx jsonb',
    `UPDATE esim_orders SET charged_amount = price, charged_currency = currency
      WHERE account_id IS NOT NULL`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
