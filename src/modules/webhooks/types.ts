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
  disabled_reason: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export interface WebhookDeliveriesTable {
  event_id: string
  endpoint_id: string
  organization_id: string
  environment: string
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
  created_at: Timestamp
}

declare module '../../db/types.js' {
  interface Database {
    webhook_endpoints: WebhookEndpointsTable
    webhook_deliveries: WebhookDeliveriesTable
    webhook_delivery_attempts: WebhookDeliveryAttemptsTable
  }
}
