import type { Json, Timestamp } from '../../db/types.js'

export interface WebhookEndpointsTable {
  id: string
  organization_id: string
  environment: string
  url: string
  description: string | null
  enabled_events: Json<string[]>
  status: 'enabled' | 'disabled'
  /** The signing secret, encrypted under the master key; never stored or logged in clear. */
  secret_sealed: string
  /** The secret replaced by the last rotation; it still signs until previous_secret_expires_at. */
  previous_secret_sealed: string | null
  previous_secret_expires_at: Timestamp | null
  /** Start of the current run of failed attempts; null after any success. */
  failing_since: Timestamp | null
  /** Why it is disabled: `failing` (72 hours of failures, by the delivery worker) or `manual` (PATCH); null while enabled. */
  disabled_reason: 'failing' | 'manual' | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface WebhookDeliveriesTable {
  /** `whd_` id: the time the delivery was first queued, then 16 characters derived from its event and endpoint. */
  id: string
  event_id: string
  endpoint_id: string
  organization_id: string
  environment: string
  /** The event's type, so the delivery log filters without reading the events. */
  event_type: string
  status: 'pending' | 'delivered' | 'failed' | 'canceled'
  /** Attempts ever made for this (event, endpoint), replays included: the Svc-Delivery-Attempt counter. */
  attempts: number
  /** Consecutive failures of the current chain: the position in the retry schedule. */
  failures: number
  next_attempt_at: Timestamp
  first_failed_at: Timestamp | null
  last_attempt_at: Timestamp | null
  delivered_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface WebhookDeliveryAttemptsTable {
  /** `wha_` id (`whd_` names deliveries). */
  id: string
  event_id: string
  endpoint_id: string
  organization_id: string
  environment: string
  event_type: string
  attempt: number
  url: string
  succeeded: boolean
  status_code: number | null
  duration_ms: number
  error: string | null
  response_body: string | null
  /** When the attempt was claimed, just before the POST; `created_at` is when its outcome was recorded. */
  started_at: Timestamp
  created_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    webhook_endpoints: WebhookEndpointsTable
    webhook_deliveries: WebhookDeliveriesTable
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable
  }
}
