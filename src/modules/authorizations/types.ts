import type { Json, Timestamp } from '../../db/types.js'
import type { FxDetailsValue } from '../../http/fx-details.js'
import type { RuleResult } from '../authorization-rules/index.js'
import type { MerchantValue } from '../transactions/index.js'

/** One request the network sent for an authorization: the first one, then each increment. */
export interface AuthorizationRequestValue {
  type: 'authorization' | 'increment'
  amount: number
  approved: boolean
  decline_reason: string | null
  created_at: string
  /** Who decided this request (absent on requests recorded before the integrator could decide). */
  decision?: DecisionRecord
  /** What each authorization rule said of this request (absent on requests recorded before rules applied). */
  rule_results?: RuleResult[]
  /** The active rule that declined it (`decline_reason` `rule_declined`). */
  rule_id?: string | null
}

/**
 * How an authorization in another currency than its account's was converted (docs/fx.md): `rate` is quote-per-base
 * (base the merchant's currency, quote the account's) as canonical decimal text, `markup_bps` the program's markup
 * at the time, `fee_amount` the markup's part of `amount` (account currency minor units), `rate_at` when the rate
 * was set. Increments and reversals in the merchant's currency convert at this same rate and markup.
 */
export type AuthorizationFxValue = FxDetailsValue

/** Who decided a request: the service's rules alone, the integrator's endpoint, or the stand-in when it did not answer. */
export interface DecisionRecord {
  source: 'svc' | 'integrator' | 'stand_in'
  /** How long the integrator's endpoint took (0 when none was called). */
  latency_ms: number
  stand_in_reason?: 'timeout' | 'error' | 'invalid_response'
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
  /** The account's currency: `amount` and every amount above are in it. */
  currency: string
  /** What the merchant asked, in its currency (equal to `amount` when `merchant_currency` is `currency`). */
  merchant_amount: number
  merchant_currency: string
  /** The conversion from the merchant's currency into the account's; null when they are equal. */
  fx: Json<AuthorizationFxValue> | null
  merchant: Json<MerchantValue>
  decline_reason: string | null
  /** The active authorization rule that declined it (`decline_reason` `rule_declined`); null otherwise. */
  rule_id: string | null
  /** What each authorization rule that applied said of the latest request (`[]`: none applied, or none was reached). */
  rule_results: Json<RuleResult[]>
  /**
   * The velocity counters and buckets an approved authorization was counted in (`[[key, bucket], …]`): what later
   * changes what it holds or captured changes them by as much. Not in the REST object.
   */
  rule_counters: Json<(readonly [string, number])[]>
  hold_id: string | null
  request_history: Json<AuthorizationRequestValue[]>
  /** Who decided the latest request (the first one, or the latest increment). */
  decision: Json<DecisionRecord>
  expires_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

/** The organization's authorization endpoint in one environment: asked to decide what the service's rules approve. */
export interface AuthorizationEndpointsTable {
  id: string
  organization_id: string
  environment: string
  url: string
  timeout_ms: number
  stand_in: 'approve' | 'decline'
  /** The signing secret, sealed like a webhook endpoint's (webhooks/secrets.ts); never stored or logged in clear. */
  secret_sealed: string
  previous_secret_sealed: string | null
  previous_secret_expires_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

/** One call to an authorization endpoint (or the decision to skip it while its circuit is open). */
export interface AuthorizationEndpointAttemptsTable {
  id: string
  organization_id: string
  environment: string
  authorization_id: string
  request_type: 'authorization' | 'increment'
  /** The `req_` id of the API request that caused the call. */
  request_id: string | null
  url: string
  response_status: number | null
  latency_ms: number
  outcome: 'approved' | 'partially_approved' | 'declined' | 'stand_in'
  approved_amount: number | null
  stand_in_reason: 'timeout' | 'error' | 'invalid_response' | null
  error: string | null
  created_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    authorizations: AuthorizationsTable
    authorization_endpoints: AuthorizationEndpointsTable
    authorization_endpoint_attempts: AuthorizationEndpointAttemptsTable
  }
}
