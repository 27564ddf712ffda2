import type { Static } from 'typebox'
import { iso } from '../../http/ownership.js'
import type { CardholderRow } from './repo.js'
import type { Address, Cardholder, KycStatus } from './schemas.js'
import type { AddressValue } from './types.js'

export type CardholderView = Static<typeof Cardholder>
type AddressView = Static<typeof Address>

/**
 * The status a caller sees: the current attestation's status, or `expired` once its expires_at has passed. Under a
 * sandbox clock the clock's time decides, and its advance announces an expiry (`kyc.expiry`) the moment it passes it:
 * the announcement is the expiry, whatever time `now` reads (docs/sandbox-clocks.md).
 */
export function effectiveKycStatus(
  row: Pick<CardholderRow, 'kyc_status' | 'kyc_expires_at'> &
    Partial<Pick<CardholderRow, 'clock_id' | 'kyc_expiry_notified'>>,
  now: Date,
): KycStatus {
  if (row.clock_id) return row.kyc_expiry_notified ? 'expired' : (row.kyc_status as KycStatus)
  if (row.kyc_expires_at && new Date(row.kyc_expires_at).getTime() <= now.getTime())
    return 'expired'
  return row.kyc_status as KycStatus
}

/** An address as sent, in the shape it is held and returned (absent optional parts become null, country upper case). */
export function normalizeAddress(input: {
  line1: string
  line2?: string | null
  city: string
  state?: string | null
  postal_code: string
  country: string
}): AddressValue {
  return {
    line1: input.line1,
    line2: input.line2 ?? null,
    city: input.city,
    state: input.state ?? null,
    postal_code: input.postal_code,
    country: input.country.toUpperCase(),
  }
}

export function sameAddress(a: AddressValue | null, b: AddressValue | null): boolean {
  if (a === null || b === null) return a === b
  return (
    a.line1 === b.line1 &&
    a.line2 === b.line2 &&
    a.city === b.city &&
    a.state === b.state &&
    a.postal_code === b.postal_code &&
    a.country === b.country
  )
}

export function presentAddress(value: AddressValue | null | undefined): AddressView | null {
  if (!value) return null
  return {
    line1: value.line1,
    line2: value.line2 ?? null,
    city: value.city,
    state: value.state ?? null,
    postal_code: value.postal_code,
    country: value.country,
  }
}

/** The REST shape of a cardholder (also the `data.object` of its events); the identity document never leaves. */
export function presentCardholder(row: CardholderRow, now: Date): CardholderView {
  return {
    id: row.id,
    object: 'cardholder',
    type: 'individual',
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone_number: row.phone_number,
    reference: row.reference,
    address: presentAddress(row.address as AddressValue | null),
    kyc_status: effectiveKycStatus(row, now),
    has_identity_document: row.identity_document_sealed !== null,
    metadata: (row.metadata ?? {}) as Record<string, string>,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    // Sandbox: only a cardholder under a clock names it (docs/sandbox-clocks.md).
    ...(row.clock_id ? { clock_id: row.clock_id } : {}),
  }
}

/** Card issuance needs an address on file (`address_required` otherwise). */
export function cardholderHasAddress(row: CardholderRow): boolean {
  return row.address !== null && row.address !== undefined
}

/** Card issuance needs an identity document on file (`identity_document_required` otherwise). */
export function cardholderHasIdentityDocument(row: CardholderRow): boolean {
  return row.identity_document_sealed !== null
}
