import { sql, type Insertable, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, whereIs, type PageBounds } from '../../http/pagination.js'
import { clockOfCardSql } from '../cards/index.js'
import type { AuthenticationsTable } from './types.js'
import './types.js'

export type AuthenticationRow = Selectable<AuthenticationsTable>
/** An authentication with the sandbox clock its card's cardholder is on (null: none), read in the same statement. */
export type AuthenticationOnClock = AuthenticationRow & { clock_id: string | null }

/** The sandbox clock of the authentication's card (docs/sandbox-clocks.md), as a column of the statement. */
const clockOfRow = () => clockOfCardSql(sql.ref('authentications.card_id'))
const clockColumn = () => clockOfRow().as('clock_id')

/** Inserts the challenge and answers it with its card's clock: learning the clock costs no statement more. */
export async function insertAuthentication(
  db: Db,
  row: Insertable<AuthenticationsTable>,
): Promise<AuthenticationOnClock> {
  return db
    .insertInto('authentications')
    .values(row)
    .returningAll()
    .returning(clockColumn())
    .executeTakeFirstOrThrow()
}

/** A challenge written before its clock was known, moved onto the clock's time (created at `at`). */
export async function retime(
  db: Db,
  id: string,
  at: Date,
  expiresAt: Date,
): Promise<AuthenticationRow> {
  return db
    .updateTable('authentications')
    .set({ created_at: at, updated_at: at, expires_at: expiresAt })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function findAuthentication(
  db: Db,
  id: string,
): Promise<AuthenticationOnClock | undefined> {
  return db
    .selectFrom('authentications')
    .selectAll()
    .select(clockColumn())
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function lockAuthentication(
  db: Db,
  id: string,
): Promise<AuthenticationRow | undefined> {
  return db
    .selectFrom('authentications')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

/** Answers a pending, unexpired challenge; undefined when it was no longer open (answered meanwhile, or due to expire). */
export async function decide(
  db: Db,
  id: string,
  status: 'approved' | 'declined',
  now: Date,
): Promise<AuthenticationRow | undefined> {
  return db
    .updateTable('authentications')
    .set({ status, decided_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst()
}

/**
 * Marks pending challenges whose five minutes have passed as expired, in one statement: either one
 * (by id) or all of an organization's environment. Each row comes back once, so each emits once.
 */
export async function expireDue(
  db: Db,
  where: { id?: string; organizationId?: string; environment?: string },
  now: Date,
): Promise<AuthenticationOnClock[]> {
  let q = db
    .updateTable('authentications')
    .set({ status: 'expired', decided_at: sql<Date>`expires_at`, updated_at: now })
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
  if (where.id !== undefined) q = q.where('id', '=', where.id)
  // Many at once (a list): those under a sandbox clock expire in its advance, on its time, not on this one.
  else q = q.where(sql<boolean>`${clockOfRow()} IS NULL`)
  if (where.organizationId !== undefined) q = q.where('organization_id', '=', where.organizationId)
  if (where.environment !== undefined) q = q.where('environment', '=', where.environment)
  return q.returningAll().returning(clockColumn()).execute()
}

export interface AuthenticationFilter {
  organizationId: string
  environment: string
  cardId?: string
  status?: string
}

export async function listAuthentications(
  db: Db,
  filter: AuthenticationFilter,
  bounds: PageBounds,
): Promise<AuthenticationRow[]> {
  let q = db
    .selectFrom('authentications')
    .selectAll()
    .where('organization_id', '=', filter.organizationId)
    .where('environment', '=', filter.environment)
  if (filter.cardId !== undefined) q = q.where('card_id', '=', filter.cardId)
  if (filter.status !== undefined) q = whereIs(q, 'status', filter.status)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}
