import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { clockOfCardSql } from '../cards/index.js'
import { applyBounds, whereIs, type PageBounds } from '../../http/pagination.js'
import type { DisputesTable } from './types.js'
import './types.js'

export type DisputeRow = Selectable<DisputesTable>

/** The unique index that keeps one open dispute per transaction. */
export const ONE_OPEN_CONSTRAINT = 'disputes_one_open'

export async function insertDispute(db: Db, row: Insertable<DisputesTable>): Promise<DisputeRow> {
  return db.insertInto('disputes').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findDispute(db: Db, id: string): Promise<DisputeRow | undefined> {
  return db.selectFrom('disputes').selectAll().where('id', '=', id).executeTakeFirst()
}

/** `findDispute` with the sandbox clock of its card (docs/sandbox-clocks.md), read in the same statement. */
export async function findDisputeWithClock(
  db: Db,
  id: string,
): Promise<(DisputeRow & { clock_id: string | null }) | undefined> {
  return db
    .selectFrom('disputes')
    .selectAll()
    .select(sql<string | null>`${clockOfCardSql(sql.ref('disputes.card_id'))}`.as('clock_id'))
    .where('id', '=', id)
    .executeTakeFirst()
}

export async function lockDispute(db: Db, id: string): Promise<DisputeRow | undefined> {
  return db.selectFrom('disputes').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export async function updateDispute(
  db: Db,
  id: string,
  patch: Updateable<DisputesTable>,
): Promise<DisputeRow> {
  return db
    .updateTable('disputes')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Moves a dispute from one status to another only if it is still in the first; undefined otherwise. */
export async function moveIf(
  db: Db,
  id: string,
  from: string,
  to: string,
  now: Date,
): Promise<DisputeRow | undefined> {
  return db
    .updateTable('disputes')
    .set({ status: to, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst()
}

export async function findOpenDispute(
  db: Db,
  transactionId: string,
): Promise<DisputeRow | undefined> {
  return db
    .selectFrom('disputes')
    .selectAll()
    .where('transaction_id', '=', transactionId)
    .where('status', 'in', ['submitted', 'under_review'])
    .executeTakeFirst()
}

/** What disputes of a transaction have won back so far. */
export async function wonTotal(db: Db, transactionId: string): Promise<number> {
  const row = await db
    .selectFrom('disputes')
    .select(sql<string>`coalesce(sum(amount), 0)`.as('total'))
    .where('transaction_id', '=', transactionId)
    .where('status', '=', 'won')
    .executeTakeFirst()
  return Number(row?.total ?? 0)
}

/** Amount of a capture that disputes hold or took back: won ones plus those still open. */
export async function claimedTotal(db: Db, transactionId: string): Promise<number> {
  const row = await db
    .selectFrom('disputes')
    .select(sql<string>`coalesce(sum(amount), 0)`.as('total'))
    .where('transaction_id', '=', transactionId)
    .where('status', 'in', ['won', 'submitted', 'under_review'])
    .executeTakeFirst()
  return Number(row?.total ?? 0)
}

export interface DisputeFilter {
  organizationId: string
  environment: string
  transactionId?: string
  cardId?: string
  status?: string
}

export async function listDisputes(
  db: Db,
  filter: DisputeFilter,
  bounds: PageBounds,
): Promise<DisputeRow[]> {
  let q = db
    .selectFrom('disputes')
    .selectAll()
    .where('organization_id', '=', filter.organizationId)
    .where('environment', '=', filter.environment)
  if (filter.transactionId !== undefined) q = q.where('transaction_id', '=', filter.transactionId)
  if (filter.cardId !== undefined) q = q.where('card_id', '=', filter.cardId)
  if (filter.status !== undefined) q = whereIs(q, 'status', filter.status)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}
