import type { Json, Timestamp } from '../../db/types.js'
import type { MerchantValue } from '../transactions/index.js'


/** One request the network sent for an authorization: the first one, then each increment. */
export interface AuthorizationRequestValue {
  type: 'authorization' | 'increment'
  amount: number
  approved: boolean
  decline_reason: string | null
  created_at: string
}

/** An authorization, approved (with the ledger hold it placed) or declined. */
export interface AuthorizationsTable {
  id: string
  organization_id: string
  environment: string
  program_id: string
  card_id: string
  account_id: string
  network_token_id: string | null
  status: string
  approved: boolean
  /** Approved amount: the first request plus approved increments (for a declined one, what was asked). */
  amount: number
  /** What the hold still holds. */
  held_amount: number
  captured_amount: number
  reversed_amount: number
  currency: string
  merchant: Json<MerchantValue>
  decline_reason: string | null
  hold_id: string | null
  request_history: Json<AuthorizationRequestValue[]>
  expires_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    authorizations: AuthorizationsTable
  }
}
