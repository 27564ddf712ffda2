import {
  type ExpressionBuilder,
  sql,
  type Insertable,
  type Selectable,
  type Updateable,
} from 'kysely'
import { PLAN_PER_CALL } from '../../db/client.js'
import type { Database, Db } from '../../db/types.js'
import { applyBounds, mergedPage, whereIs, type PageBounds } from '../../http/pagination.js'
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
  return db
    .selectFrom('cardholders')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

export async function updateCardholder(
  db: Db,
  id: string,
  changes: CardholderChanges,
): Promise<CardholderRow> {
  return db
    .updateTable('cardholders')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface CardholderFilters {
  kycStatus?: string
  reference?: string
}

/**
 * Newest first; `kyc_status` is matched on the effective status at `now` (expiry included), as each cardholder reads
 * it (`effectiveKycStatus`): a cardholder on a sandbox clock expires when the clock's advance announces it
 * (`kyc_expiry_notified`), never at wall time `now`. A status reads `cardholders_kyc_status`, which holds only rows
 * whose expiry is not announced, so the walk skips only expiries still due; `expired` merges the announced ones
 * (`cardholders_kyc_expired`) with those due (`cardholders_kyc_expiry_due`, by expiry: normally none) of cardholders
 * without a clock. `reference` reads its own index.
 */
export async function listCardholders(
  db: Db,
  organizationId: string,
  environment: string,
  filters: CardholderFilters,
  now: Date,
  bounds: PageBounds,
): Promise<CardholderRow[]> {
  let q = db
    .selectFrom('cardholders')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
  if (filters.reference !== undefined) q = q.where('reference', '=', filters.reference)
  if (filters.kycStatus === 'expired') {
    // Announced (on wall time, or by a clock's advance), or past `now` and still due, for cardholders without a clock.
    const pastDue = (eb: ExpressionBuilder<Database, 'cardholders'>) =>
      eb.and([
        eb('kyc_expires_at', 'is not', null),
        eb('kyc_expires_at', '<=', now),
        eb('clock_id', 'is', null),
      ])
    if (filters.reference !== undefined) {
      const expired = q.where((eb) => eb.or([eb('kyc_expiry_notified', '=', true), pastDue(eb)]))
      return applyBounds(expired, bounds, 'id', 'desc').execute()
    }
    const announced = q.where(sql<boolean>`kyc_expiry_notified`)
    const due = q.where(sql<boolean>`NOT kyc_expiry_notified`).where(pastDue)
    // Written-in booleans match each branch to its partial index; the second is planned per call, as only `now`
    // says that few expiries are due (a generic plan would walk the scope looking for them).
    return mergedPage(db, [announced, due.modifyEnd(sql.raw(PLAN_PER_CALL))], bounds, 'id', 'desc')
  }
  if (filters.kycStatus !== undefined) {
    // Not expired: not announced, and (without a clock) not past `now`; an announced expiry is past (it is set only
    // then), and saying so lets the partial index answer.
    q = whereIs(q, 'kyc_status', filters.kycStatus)
      .where(sql<boolean>`NOT kyc_expiry_notified`)
      .where((eb) =>
        eb.or([
          eb('kyc_expires_at', 'is', null),
          eb('kyc_expires_at', '>', now),
          eb('clock_id', 'is not', null),
        ]),
      )
  }
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Marks the expiry of one attestation as announced; true for exactly one caller once it has passed. */
export async function claimExpiryNotice(
  db: Db,
  cardholderId: string,
  attestationId: string,
  now: Date,
): Promise<CardholderRow | undefined> {
  return db
    .updateTable('cardholders')
    .set({ kyc_expiry_notified: true })
    .where('id', '=', cardholderId)
    .where('kyc_attestation_id', '=', attestationId)
    .where('kyc_expiry_notified', '=', false)
    .where('kyc_expires_at', '<=', now)
    .returningAll()
    .executeTakeFirst()
}
