import type { Timestamp } from '../../db/types.js'

export interface LedgerEntriesTable {
  id: string
  account_id: string
  organization_id: string
  environment: string
  seq: number
  type: string
  amount: number
  currency: string
  ledger_balance_after: number
  held_balance_after: number
  available_balance_after: number
  source_id: string | null
  client_transaction_id: string | null
  reference: string | null
  description: string | null
  created_at: Timestamp
}

export interface HoldsTable {
  id: string
  account_id: string
  organization_id: string
  environment: string
  source_id: string | null
  currency: string
  amount: number
  remaining: number
  captured: number
  released: number
  status: string
  expires_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    ledger_entries: LedgerEntriesTable
    holds: HoldsTable
  }
}
