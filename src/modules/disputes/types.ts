import type { Json, Timestamp } from '../../db/types.js'

/** What the caller sent in support of a dispute: free text or a structured object, kept as given. */
export type EvidenceValue = string | Record<string, unknown> | null

/** One dispute of a settled capture; at most one per transaction is open (submitted or under review). */
export interface DisputesTable {
  id: string
  organization_id: string
  environment: string
  transaction_id: string
  card_id: string
  account_id: string
  program_id: string
  amount: number
  currency: string
  reason: string
  evidence: Json<EvidenceValue> | null
  status: string
  resolved_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    disputes: DisputesTable
  }
}
