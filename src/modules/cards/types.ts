import type { Json, Timestamp } from '../../db/types.js'
import type { DeliveryAddressValue } from './delivery-address.js'
import type { SpendingControlsValue } from './spending-controls.js'

export interface ShippingValue {
  status: 'pending' | 'shipped' | 'delivered'
  shipped_at: string | null
  delivered_at: string | null
}

/** One card. Card numbers live at the processor; only `last4` and the expiry are kept here. */
export interface CardsTable {
  id: string
  organization_id: string
  environment: string
  program_id: string
  cardholder_id: string
  account_id: string
  processor: string
  form_factor: string
  card_type: string
  brand: string
  status: string
  processor_reference: string | null
  last4: string | null
  exp_month: number | null
  exp_year: number | null
  embossed_name: string
  delivery_address: Json<DeliveryAddressValue>
  shipping: Json<ShippingValue | null> | null
  spending_controls: Json<SpendingControlsValue>
  metadata: Json<Record<string, string>>
  pin_set: boolean
  replacement_for: string | null
  replacement_reason: string | null
  replaced_by: string | null
  /** True while the card takes the one slot of a one-card-per-cardholder program (a unique index decides races). */
  holds_card_slot: boolean
  /** Travel mode: the eSIM whose country the card may also spend in (null: off). */
  travel_esim_id: string | null
  /** That eSIM's current country, copied by the eSIM's changes (null until it reports one). */
  travel_country: string | null
  /** When that eSIM's bundle stops being valid, copied likewise (null: suspended, canceled, or off). */
  travel_valid_until: Timestamp | null
  issued_at: Timestamp | null
  closed_at: Timestamp | null
  created_at: Timestamp
  updated_at: Timestamp
}

/** A short-lived RSA key for one PIN: the private half is sealed, spent by its first use. */
export interface CardPinKeysTable {
  id: string
  organization_id: string
  environment: string
  card_id: string
  program_id: string
  private_key_sealed: string
  expires_at: Timestamp
  spent_at: Timestamp | null
  created_at: Timestamp
}

/** Who used card secrets, when, on which card, for what, with which outcome; never the secret itself. */
export interface CardSecretAuditTable {
  id: string
  organization_id: string
  environment: string
  client_id: string
  card_id: string
  operation: string
  outcome: string
  request_id: string
  created_at: Timestamp
}

/**
 * A hosted card details page (reveal session): single use, for an iframe on one origin. Only the SHA-256 of its
 * token is kept; the card number is read from the processor when the page is viewed, never stored.
 */
export interface CardRevealSessionsTable {
  id: string
  organization_id: string
  environment: string
  card_id: string
  /** The client that created it: its views are audited under this client. */
  client_id: string
  token_hash: string
  target_origin: string
  fields: Json<RevealField[]>
  expires_at: Timestamp
  used_at: Timestamp | null
  created_at: Timestamp
}

/** What a reveal session may show, in display order. */
export type RevealField = 'number' | 'cvc' | 'expiry'

declare module '../../db/types.js' {
  interface Database {
    cards: CardsTable
    card_pin_keys: CardPinKeysTable
    card_secret_audit: CardSecretAuditTable
    card_reveal_sessions: CardRevealSessionsTable
  }
}
