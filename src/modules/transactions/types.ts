import type { Json, Timestamp } from '../../db/types.js'
import type { FxDetailsValue } from '../../http/fx-details.js'

/** Where a card was used, as the network reports it. */
export interface MerchantValue {
  name: string
  mcc: string | null
  city: string | null
  country: string | null
}

/** A capture of an authorization or a refund; money moved on the account's ledger when it was created. */
export interface TransactionsTable {
  id: string
  organization_id: string
  environment: string
  program_id: string
  type: string
  status: string
  amount: number
  refunded_amount: number
  /** The account's currency: `amount` and `refunded_amount` are in it (what the ledger moved). */
  currency: string
  /** What the merchant cleared or refunded, in its currency (equal to `amount` when it is `currency`). */
  merchant_amount: number
  /** For a capture: what its refunds gave back in `merchant_currency` (what a refund is judged against). */
  merchant_refunded_amount: number
  merchant_currency: string
  /** How `merchant_amount` became `amount` (docs/fx.md, "Transactions"); null when the currencies are equal. */
  fx: Json<FxDetailsValue> | null
  authorization_id: string | null
  card_id: string
  account_id: string
  merchant: Json<MerchantValue>
  /** For a refund of a capture: the capture it returns money from. */
  original_transaction_id: string | null
  reason: string | null
  created_at: Timestamp
  updated_at: Timestamp
  settled_at: Timestamp | null
}

declare module '../../db/types.js' {
  interface Database {
    transactions: TransactionsTable
  }
}
