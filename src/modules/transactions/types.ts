import type { Json, Timestamp } from '../../db/types.js'

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
  currency: string
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
