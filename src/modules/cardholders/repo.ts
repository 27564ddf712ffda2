import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
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

/**
 * Whether the cardholder has an account on a program that takes address changes only through KYC.
 * Reads the accounts table when it exists (it belongs to the accounts module and may not be migrated yet).
 */
export async function hasAccountOnAddressKycProgram(db: Db, cardholderId: string): Promise<boolean> {
  const exists = await sql<{ t: string | null }>`SELECT to_regclass('accounts')::text AS t`.execute(db)
  if (!exists.rows[0]?.t) return false
  const { rows } = await sql<{ one: number }>`
    SELECT 1 AS one FROM accounts a JOIN programs p ON p.id = a.program_id
    WHERE a.cardholder_id = ${cardholderId} AND p.address_change_requires_kyc LIMIT 1`.execute(db)
  return rows.length > 0
}
