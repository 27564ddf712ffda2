import type { Timestamp } from '../../db/types.js'

export interface AccountsTable {
  id: string
  organization_id: string
  environment: string
  program_id: string
  cardholder_id: string
  currency: string
  status: string
  ledger_balance: number
  held_balance: number
  entry_seq: number
  upstream_reference: string | null
  block_reason: string | null
  block_note: string | null
  metadata: Record<string, string>
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    accounts: AccountsTable
  }
}
