import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import { createdInWindow, type CreatedWindow } from '../../db/created-window.js'
import type { Db } from '../../db/types.js'
import { applyBounds, closedSetPage, whereIs, type PageBounds } from '../../http/pagination.js'
import { clockOfCardSql } from '../cards/index.js'
import { TRANSACTION_STATUSES, TRANSACTION_TYPES } from './schemas.js'
import type { TransactionsTable } from './types.js'
import './types.js'

export type TransactionRow = Selectable<TransactionsTable>

export async function insertTransaction(
  trx: Db,
  row: Insertable<TransactionsTable>,
): Promise<TransactionRow> {
  return trx.insertInto('transactions').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findTransaction(db: Db, id: string): Promise<TransactionRow | undefined> {
  return db.selectFrom('transactions').selectAll().where('id', '=', id).executeTakeFirst()
}

/** `findTransaction` with the sandbox clock of its card (docs/sandbox-clocks.md), read in the same statement. */
export async function findTransactionWithClock(
  db: Db,
  id: string,
): Promise<(TransactionRow & { clock_id: string | null }) | undefined> {
  return db
    .selectFrom('transactions')
    .selectAll()
    .select(sql<string | null>`${clockOfCardSql(sql.ref('transactions.card_id'))}`.as('clock_id'))
    .where('id', '=', id)
    .executeTakeFirst()
}

/** The transaction locked for the rest of the caller's transaction (refunds of one capture run one at a time). */
export async function lockTransaction(trx: Db, id: string): Promise<TransactionRow | undefined> {
  return trx
    .selectFrom('transactions')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

export async function updateTransaction(
  trx: Db,
  id: string,
  patch: Updateable<TransactionsTable>,
): Promise<TransactionRow> {
  return trx
    .updateTable('transactions')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/**
 * Moves a pending transaction to settled; undefined when it was not pending any more (someone else settled it), or,
 * with `madeBy`, when it was made after that time (not yet due).
 */
export async function settlePending(
  trx: Db,
  id: string,
  now: Date,
  madeBy?: Date,
): Promise<TransactionRow | undefined> {
  let q = trx
    .updateTable('transactions')
    .set({ status: 'settled', settled_at: now, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', 'pending')
  if (madeBy) q = q.where('created_at', '<=', madeBy)
  return q.returningAll().executeTakeFirst()
}

/** Pending transactions of these cards (a sandbox clock's) made at or before `madeBy`, oldest first (ties by id). */
export async function pendingOfCards(
  db: Db,
  cardIds: readonly string[],
  madeBy: Date,
  limit: number,
): Promise<Pick<TransactionRow, 'id' | 'created_at'>[]> {
  if (cardIds.length === 0) return []
  return db
    .selectFrom('transactions')
    .select(['id', 'created_at'])
    .where('card_id', 'in', [...cardIds])
    .where('status', '=', 'pending')
    .where('created_at', '<=', madeBy)
    .orderBy('created_at')
    .orderBy('id')
    .limit(limit)
    .execute()
}

export interface TransactionFilter {
  organizationId: string
  environment: string
  cardId?: string
  accountId?: string
  authorizationId?: string
  type?: string
  status?: string
}

/**
 * A page of the caller's transactions, newest first. A parent filter (card, account, authorization) reads that
 * parent's index and checks the rest on its rows; otherwise `type` and `status` read `transactions_type_status`,
 * one range per value of whichever is left open (docs/platform.md, "List filters and their indexes").
 */
export async function listTransactions(
  db: Db,
  filter: TransactionFilter,
  bounds: PageBounds,
): Promise<TransactionRow[]> {
  let q = db
    .selectFrom('transactions')
    .selectAll()
    .where('organization_id', '=', filter.organizationId)
    .where('environment', '=', filter.environment)
  const byParent =
    filter.cardId !== undefined ||
    filter.accountId !== undefined ||
    filter.authorizationId !== undefined
  if (filter.cardId !== undefined) q = q.where('card_id', '=', filter.cardId)
  if (filter.accountId !== undefined) q = q.where('account_id', '=', filter.accountId)
  if (filter.authorizationId !== undefined)
    q = q.where('authorization_id', '=', filter.authorizationId)
  if (byParent) {
    if (filter.type !== undefined) q = whereIs(q, 'type', filter.type)
    if (filter.status !== undefined) q = whereIs(q, 'status', filter.status)
    return applyBounds(q, bounds, 'id', 'desc').execute()
  }
  return closedSetPage(db, q, bounds, {
    type: { value: filter.type, all: TRANSACTION_TYPES },
    status: { value: filter.status, all: TRANSACTION_STATUSES },
  })
}

/** A window of the caller's transactions by creation time, oldest first, one keyset batch after `after` (reports). */
export async function transactionsCreatedIn(db: Db, w: CreatedWindow): Promise<TransactionRow[]> {
  return createdInWindow(db.selectFrom('transactions').selectAll(), w).execute()
}
