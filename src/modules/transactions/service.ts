import type { AppDeps } from '../../app-deps.js'
import type { CreatedWindow } from '../../db/created-window.js'
import { withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx, type Scope } from '../../http/context.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import type { MerchantValue } from './types.js'
import { emit } from '../events/index.js'
import { moneyColumns, type TransactionMoney } from './fx.js'
import { presentTransaction } from './present.js'
import * as repo from './repo.js'
import type { TransactionView } from './schemas.js'

export { presentTransaction } from './present.js'
export type { TransactionRow } from './repo.js'
export type { TransactionView } from './schemas.js'

/** The caller's transaction by id, for every module: another organization's id answers like a missing one. */
export async function requireTransaction(
  db: Db,
  ctx: Scope,
  transactionId: string,
  param?: string,
): Promise<repo.TransactionRow> {
  const row = isId('txn', transactionId) ? await repo.findTransaction(db, transactionId) : undefined
  return requireOwned(row, ctx, 'transaction_not_found', param)
}

/**
 * The caller's transaction with the dependencies it moves on: under a sandbox clock (its card's cardholder is on one),
 * `deps.clock` reads the clock's time and `clockId` names it; otherwise `deps` itself. The clock is read with the
 * transaction, in its statement, and only in the sandbox (production has no clock).
 */
export async function requireTransactionOnClock(
  deps: AppDeps,
  ctx: Scope,
  transactionId: string,
  param?: string,
): Promise<{ txn: repo.TransactionRow; deps: AppDeps; clockId: string | null }> {
  if (ctx.environment !== 'sandbox')
    return {
      txn: await requireTransaction(deps.db, ctx, transactionId, param),
      deps,
      clockId: null,
    }
  const found = isId('txn', transactionId)
    ? await repo.findTransactionWithClock(deps.db, transactionId)
    : undefined
  const { clock_id: clockId, ...txn } = requireOwned(found, ctx, 'transaction_not_found', param)
  return { txn, deps: await onClock(deps, clockId), clockId }
}

export async function retrieveTransaction(
  deps: AppDeps,
  ctx: RequestCtx,
  transactionId: string,
): Promise<TransactionView> {
  return presentTransaction(await requireTransaction(deps.db, ctx, transactionId))
}

export interface TransactionListFilter {
  card_id?: string
  account_id?: string
  authorization_id?: string
  type?: string
  status?: string
}

/** One page of the caller's transactions, newest first. */
export async function listTransactions(
  deps: AppDeps,
  ctx: RequestCtx,
  filter: TransactionListFilter,
  page: PageParams,
): Promise<ListResult<TransactionView>> {
  const where: repo.TransactionFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    cardId: filter.card_id,
    accountId: filter.account_id,
    authorizationId: filter.authorization_id,
    type: filter.type,
    status: filter.status,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/transactions',
    page,
    sortKey: (r: repo.TransactionRow) => r.id,
    fetch: (bounds) => repo.listTransactions(deps.db, where, bounds),
    present: presentTransaction,
  })
}

/** The caller's transactions created in [from, to), oldest first, in keyset batches: the `transactions` report reads these. */
export async function transactionsCreatedIn(
  deps: AppDeps,
  window: CreatedWindow,
): Promise<TransactionView[]> {
  return (await repo.transactionsCreatedIn(deps.db, window)).map(presentTransaction)
}

export interface CaptureRecord {
  authorization: {
    id: string
    organization_id: string
    environment: string
    program_id: string
    card_id: string
    account_id: string
    currency: string
    merchant: MerchantValue
  }
  /** What the capture cleared: its amount in the account's currency, the merchant's, and the conversion. */
  money: TransactionMoney
  /** The sandbox clock the capture is under (`now` is its time): its `transaction.created` carries it. */
  clockId?: string | null
}

/**
 * Writes the `pending` capture transaction of an authorization, in the capture's own transaction (the
 * ledger entries were posted by the hold capture); emits transaction.created.
 */
export async function recordCapture(
  trx: Db,
  input: CaptureRecord,
  now: Date,
): Promise<repo.TransactionRow> {
  const a = input.authorization
  const row = await repo.insertTransaction(trx, {
    id: newId('txn'),
    organization_id: a.organization_id,
    environment: a.environment,
    program_id: a.program_id,
    type: 'capture',
    status: 'pending',
    refunded_amount: 0,
    currency: a.currency,
    ...moneyColumns(input.money),
    authorization_id: a.id,
    card_id: a.card_id,
    account_id: a.account_id,
    merchant: json(a.merchant),
    original_transaction_id: null,
    reason: null,
    created_at: now,
    updated_at: now,
    settled_at: null,
  })
  await emit(
    trx,
    { ...scopeOfRow(row), clockId: input.clockId },
    'transaction.created',
    presentTransaction(row),
    now,
  )
  return row
}

/** Settles a pending transaction (transaction.updated); one that is already settled or refunded is answered unchanged. */
export async function settleTransaction(
  deps: AppDeps,
  ctx: RequestCtx,
  transactionId: string,
): Promise<TransactionView> {
  const on = await requireTransactionOnClock(deps, ctx, transactionId)
  const current = on.txn
  if (current.status !== 'pending') return presentTransaction(current)
  const now = on.deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const row = await repo.settlePending(trx, current.id, now)
    if (!row) return presentTransaction((await repo.findTransaction(trx, current.id))!)
    const view = presentTransaction(row)
    await emit(trx, { ...scopeOfRow(row), clockId: on.clockId }, 'transaction.updated', view, now)
    return view
  })
}
