import type { Json, Timestamp } from '../../db/types.js'

/** Where the cardholder is paying, as the merchant checkout reports it. */
export interface MerchantValue {
  name: string | null
  mcc: string | null
  city: string | null
  country: string | null
}

/** One out-of-band 3-D Secure challenge; `pending` for at most five minutes. */
export interface AuthenticationsTable {
  id: string
  organization_id: string
  environment: string
  card_id: string
  program_id: string
  amount: number
  currency: string
  merchant: Json<MerchantValue>
  status: string
  expires_at: Timestamp
  decided_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    authentications: AuthenticationsTable
  }
}
