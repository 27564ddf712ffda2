import { type Insertable, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { CardholdersTable } from './types.js'
import './types.js'

export type CardholderRow = Selectable<CardholdersTable>
export type CardholderInsert = Insertable<CardholdersTable>
export type CardholderChanges = Updateable<CardholdersTable>

export const EMAIL_CONSTRAINT = 'cardholders_email_key'
export const PHONE_CONSTRAINT = 'cardholders_phone_key'

export async function insertCardholder(db: Db, row: CardholderInsert): Promise<CardholderRow> {
  return db.insertInto('cardholders').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findCardholder(db: Db, id: string): Promise<CardholderRow | undefined> {
  return db.selectFrom('cardholders').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Locks the row for the rest of the transaction, so attestations and updates apply one after another. */
export async function lockCardholder(db: Db, id: string): Promise<CardholderRow | undefined> {
  return db.selectFrom('cardholders').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export async function updateCardholder(db: Db, id: string, changes: CardholderChanges): Promise<CardholderRow> {
  return db.updateTable('cardholders').set(changes).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

export interface CardholderFilters {
  kycStatus?: string
  reference?: string
}

/** Newest first; `kyc_status` is matched on the effective status at `now` (expiry included). */
export async function listCardholders(db: Db, organizationId: string, environment: string, filters: CardholderFilters, now: Date, bounds: PageBounds): Promise<CardholderRow[]> {
  let q = db.selectFrom('cardholders').selectAll().where('organization_id', '=', organizationId).where('environment', '=', environment)
  if (filters.reference !== undefined) q = q.where('reference', '=', filters.reference)
  if (filters.kycStatus === 'expired') {
    q = q.where('kyc_expires_at', 'is not', null).where('kyc_expires_at', '<=', now)
  } else if (filters.kycStatus !== undefined) {
    q = q.where('kyc_status', '=', filters.kycStatus).where((eb) => eb.or([eb('kyc_expires_at', 'is', null), eb('kyc_expires_at', '>', now)]))
  }
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Marks the expiry of one attestation as announced; true for exactly one caller once it has passed. */
export async function claimExpiryNotice(db: Db, cardholderId: string, attestationId: string, now: Date): Promise<CardholderRow | undefined> {
  return db.updateTable('cardholders').set({ kyc_expiry_notified: true })
    .where('id', '=', cardholderId).where('kyc_attestation_id', '=', attestationId)
    .where('kyc_expiry_notified', '=', false).where('kyc_expires_at', '<=', now)
    .returningAll().executeTakeFirst()
}
