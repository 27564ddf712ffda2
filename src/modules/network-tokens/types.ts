import type { Timestamp } from '../../db/types.js'

/** One wallet token of a card; `deleted` is terminal. */
export interface NetworkTokensTable {
  id: string
  organization_id: string
  environment: string
  card_id: string
  program_id: string
  wallet: string
  status: string
  activated_at: Timestamp | null
  deleted_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    network_tokens: NetworkTokensTable
  }
}
