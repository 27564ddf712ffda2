import type { AppDeps } from '../../app-deps.js'
import type { CreatedWindow } from '../../db/created-window.js'
import { withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx, type Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import { DISPUTED_TOTAL } from './hooks.js'
import type { MerchantValue } from './types.js'
import { requireCard } from '../cards/index.js'
import { emit } from '../events/index.js'
import { applySettledMovement, lockAccountRow } from '../ledger/index.js'
import { presentTransaction } from './present.js'
import * as repo from './repo.js'
import type { RefundBody, SimulateRefundBody, TransactionView } from './schemas.js'

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
  amount: number
}

/**
 * Writes the `pending` capture transaction of an authorization, in the capture's own transaction (the
 * ledger entry was posted by the hold capture); emits transaction.created.
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
    amount: input.amount,
    refunded_amount: 0,
    currency: a.currency,
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
  await emit(trx, scopeOfRow(row), 'transaction.created', presentTransaction(row), now)
  return row
}

/** Settles a pending transaction (transaction.updated); one that is already settled or refunded is answered unchanged. */
export async function settleTransaction(
  deps: AppDeps,
  ctx: RequestCtx,
  transactionId: string,
): Promise<TransactionView> {
  const current = await requireTransaction(deps.db, ctx, transactionId)
  if (current.status !== 'pending') return presentTransaction(current)
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const row = await repo.settlePending(trx, current.id, now)
    if (!row) return presentTransaction((await repo.findTransaction(trx, current.id))!)
    const view = presentTransaction(row)
    await emit(trx, scopeOfRow(row), 'transaction.updated', view, now)
    return view
  })
}

/**
 * Refunds (part of) a settled capture: the account is credited (ledger `refund`), a settled `refund`
 * transaction is created, and the capture becomes `refunded` once nothing is left. Refunds of one
 * capture run one at a time under the account's row lock, so together they never exceed it.
 */
export async function refundTransaction(
  deps: AppDeps,
  ctx: RequestCtx,
  transactionId: string,
  body: RefundBody,
): Promise<TransactionView> {
  const current = await requireTransaction(deps.db, ctx, transactionId)
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    await lockAccountRow(trx, current.account_id)
    const original = (await repo.lockTransaction(trx, current.id))!
    if (original.type !== 'capture' || original.status !== 'settled') {
      const why =
        original.type !== 'capture'
          ? 'it is itself a refund'
          : original.status === 'refunded'
            ? 'it is already fully refunded'
            : 'it is not settled yet'
      throw new ApiError('transaction_not_refundable', {
        message: `Transaction ${original.id} cannot be refunded: ${why}.`,
      })
    }
    // Money a dispute won back or still claims is not refundable a second time.
    const remaining =
      Number(original.amount) -
      Number(original.refunded_amount) -
      (await deps.hooks.get(DISPUTED_TOTAL)(trx, original.id))
    if (remaining <= 0) {
      throw new ApiError('transaction_not_refundable', {
        message: `Nothing of transaction ${original.id} is left to refund: it is refunded or under dispute.`,
      })
    }
    const amount = body.amount ?? remaining
    if (amount > remaining) {
      throw new ApiError('refund_exceeds_original', {
        param: 'amount',
        message: `At most ${remaining} of transaction ${original.id} is left to refund.`,
      })
    }
    const refundId = newId('txn')
    await applySettledMovement(
      trx,
      {
        accountId: original.account_id,
        type: 'refund',
        amount,
        currency: original.currency,
        sourceId: refundId,
        requireOpen: false,
        description: body.reason ?? null,
      },
      now,
    )
    const refund = await repo.insertTransaction(trx, {
      id: refundId,
      organization_id: original.organization_id,
      environment: original.environment,
      program_id: original.program_id,
      type: 'refund',
      status: 'settled',
      amount,
      refunded_amount: 0,
      currency: original.currency,
      authorization_id: original.authorization_id,
      card_id: original.card_id,
      account_id: original.account_id,
      merchant: json(original.merchant),
      original_transaction_id: original.id,
      reason: body.reason ?? null,
      created_at: now,
      updated_at: now,
      settled_at: now,
    })
    const refunded = Number(original.refunded_amount) + amount
    const updated = await repo.updateTransaction(trx, original.id, {
      refunded_amount: refunded,
      status: refunded === Number(original.amount) ? 'refunded' : 'settled',
      updated_at: now,
    })
    const view = presentTransaction(refund)
    await emit(trx, scopeOfRow(refund), 'transaction.created', view, now)
    await emit(trx, scopeOfRow(updated), 'transaction.updated', presentTransaction(updated), now)
    return view
  })
}

/**
 * Sandbox: a merchant sends money back to a card on its own initiative (no capture named). The card's
 * account is credited even when blocked, as a network credit would be; the currency must be the account's.
 */
export async function merchantRefund(
  deps: AppDeps,
  ctx: RequestCtx,
  body: SimulateRefundBody,
): Promise<TransactionView> {
  const card = await requireCard(deps.db, ctx, body.card_id, 'card_id')
  if (card.status === 'pending') throw new ApiError('card_not_provisioned', { param: 'card_id' })
  const currency = body.currency.toUpperCase()
  const merchant: MerchantValue = {
    name: body.merchant.name,
    mcc: body.merchant.mcc ?? null,
    city: body.merchant.city ?? null,
    country: body.merchant.country?.toUpperCase() ?? null,
  }
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const account = await lockAccountRow(trx, card.account_id)
    if (account && account.currency !== currency) {
      throw new ApiError('currency_mismatch', {
        param: 'currency',
        message: `Card ${card.id} spends from a ${account.currency} account, not ${currency}.`,
      })
    }
    const id = newId('txn')
    await applySettledMovement(
      trx,
      {
        accountId: card.account_id,
        type: 'refund',
        amount: body.amount,
        currency,
        sourceId: id,
        requireOpen: false,
      },
      now,
    )
    const row = await repo.insertTransaction(trx, {
      id,
      organization_id: card.organization_id,
      environment: card.environment,
      program_id: card.program_id,
      type: 'refund',
      status: 'settled',
      amount: body.amount,
      refunded_amount: 0,
      currency,
      authorization_id: null,
      card_id: card.id,
      account_id: card.account_id,
      merchant: json(merchant),
      original_transaction_id: null,
      reason: null,
      created_at: now,
      updated_at: now,
      settled_at: now,
    })
    const view = presentTransaction(row)
    await emit(trx, scopeOfRow(row), 'transaction.created', view, now)
    return view
  })
}
