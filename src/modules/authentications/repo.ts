import { sql, type Insertable, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, whereIs, type PageBounds } from '../../http/pagination.js'
import type { AuthenticationsTable } from './types.js'
import './types.js'

export type AuthenticationRow = Selectable<AuthenticationsTable>

export async function insertAuthentication(
  db: Db,
  row: Insertable<AuthenticationsTable>,
): Promise<AuthenticationRow> {
  return db.insertInto('authentications').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findAuthentication(
  db: Db,
  id: string,
): Promise<AuthenticationRow | undefined> {
  return db.selectFrom('authentications').selectAll().where('id', '=', id).executeTakeFirst()
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
): Promise<AuthenticationRow[]> {
  let q = db
    .updateTable('authentications')
    .set({ status: 'expired', decided_at: sql<Date>`expires_at`, updated_at: now })
    .where('status', '=', 'pending')
    .where('expires_at', '<=', now)
  if (where.id !== undefined) q = q.where('id', '=', where.id)
  if (where.organizationId !== undefined) q = q.where('organization_id', '=', where.organizationId)
  if (where.environment !== undefined) q = q.where('environment', '=', where.environment)
  return q.returningAll().execute()
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
