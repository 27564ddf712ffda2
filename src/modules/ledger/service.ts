import { hash } from 'node:crypto'
import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { CreatedWindow } from '../../db/created-window.js'
import { isUniqueViolation } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { answerFresh, forgetAnswer } from '../../http/idempotency.js'
import { answerTakenError, answerToStore, storedOf } from '../../http/idempotent-answer.js'
import type { StoredAnswer } from '../../http/in-flight.js'
import type { AnswerKey } from '../../http/request-unit.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import { signalJobsQueued } from '../../jobs/wakeup.js'
import {
  availableBalance,
  presentAccount,
  requireAccount,
  type AccountRow,
  type AccountView,
} from '../accounts/index.js'
import { MAX_BALANCE } from './post.js'
import { presentEntry, type EntryView } from './present.js'
import { ADJUSTMENTS } from './batcher.js'
import * as repo from './repo.js'
import type { AccountAdjustmentRequest } from './schemas.js'

export {
  placeHold,
  incrementHold,
  releaseHold,
  releaseHolds,
  captureHold,
  findHold,
  type HoldDecision,
  type HoldChange,
  type HoldRefusal,
  type HoldRow,
  type HoldRelease,
} from './holds.js'
export { accountsCte, holdsCtes } from './repo.js'
export {
  applySettledMovement,
  postMovement,
  MAX_BALANCE,
  type Movement,
  type SettledMovementInput,
} from './post.js'
export { presentEntry, type EntryView } from './present.js'

/** Takes an account's row lock for the caller's transaction: authorizations read, decide and move money under it. */
export async function lockAccountRow(trx: Db, accountId: string): Promise<AccountRow | undefined> {
  return repo.lockAccount(trx, accountId)
}

type AdjustBody = Static<typeof AccountAdjustmentRequest>
export type Direction = 'credit' | 'debit'

export interface AdjustmentOutcome {
  account: AccountView
  /** The client_transaction_id was already applied with this amount and direction: nothing moved. */
  replay: boolean
}

/** What a credit or debit under an in-statement Idempotency-Key answers: its outcome, or the key's stored answer. */
export type KeyedAdjustmentOutcome = AdjustmentOutcome | { stored: StoredAnswer }

/** Two 32-bit keys for the advisory lock held while one (account, client_transaction_id) is being applied. */
export function clientTxnLockKey(accountId: string, clientTransactionId: string): [number, number] {
  const digest = hash('sha256', `${accountId}\u0000${clientTransactionId}`, 'buffer')
  return [digest.readInt32BE(0), digest.readInt32BE(4)]
}

/**
 * Credit or debit, exactly as the interface's idempotency table says: one statement, committed on its
 * own (shared with the other adjustments waiting at that moment, `AdjustmentBatcher`), moves the balance,
 * writes the entry and the event under the account's row lock; the unique index on (account,
 * client_transaction_id) decides which request applies an id, and an advisory lock tells a duplicate that
 * the original is still running. A refusal is explained afterwards, from a fresh read. Inside a request's
 * unit of work (`deps.unit`, a console form) the statement stores the request's answer too.
 */
export async function adjustBalance(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  direction: Direction,
  body: AdjustBody,
): Promise<AdjustmentOutcome> {
  const outcome = await adjust(deps, ctx, accountId, direction, body, deps.unit?.key)
  if ('stored' in outcome)
    throw new Error('an answer stored under a key is only read for an in-statement key')
  return outcome
}

/**
 * `adjustBalance` for the API route, whose Idempotency-Key (`key`, if sent) the adjustment's statement locks and
 * looks up itself: an answer already stored under it comes back as `stored` (fresh: older ones are removed and the
 * adjustment runs), and nothing moves.
 */
export function adjustBalanceUnderKey(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  direction: Direction,
  body: AdjustBody,
  key: AnswerKey | undefined,
): Promise<KeyedAdjustmentOutcome> {
  return adjust(deps, ctx, accountId, direction, body, key)
}

async function adjust(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  direction: Direction,
  body: AdjustBody,
  key: AnswerKey | undefined,
): Promise<KeyedAdjustmentOutcome> {
  if (!isId('acct', accountId)) throw new ApiError('account_not_found')
  const clientTransactionId = body.client_transaction_id ?? null
  const currency = body.currency?.toUpperCase() ?? null
  const batcher = deps.state.of(ADJUSTMENTS)
  const answer = answerToStore(200, key)
  for (let attempt = 0; attempt < 3; attempt++) {
    let result: repo.AdjustmentResult | null = null
    try {
      result = await batcher.apply({
        accountId,
        organizationId: ctx.organizationId,
        environment: ctx.environment,
        entryId: newId('le'),
        type: direction,
        delta: direction === 'credit' ? body.amount : -body.amount,
        currency,
        clientTransactionId,
        lockKey: clientTransactionId ? clientTxnLockKey(accountId, clientTransactionId) : null,
        reference: body.reference ?? null,
        description: body.description ?? null,
        answer,
      })
    } catch (err) {
      // The key's answer is already stored (another holder got there first): the retry replays it.
      const taken = answerTakenError(err)
      if (taken) throw taken
      if (!isUniqueViolation(err, repo.CLIENT_TXN_CONSTRAINT)) throw err
    }
    const stored = result && key?.inStatement ? storedOf(result.stored) : null
    if (stored && key) {
      if (answerFresh(deps, stored)) return { stored }
      await forgetAnswer(deps.db, key.request, stored) // past the window: the key is new again
      continue
    }
    if (result && !result.key_ok) throw new ApiError('idempotency_request_in_progress')
    if (result && !result.lock_ok) {
      await requireAccount(deps.db, ctx, accountId) // someone else's account answers not-found, never "in progress"
      throw new ApiError('idempotency_request_in_progress', {
        param: 'client_transaction_id',
        message:
          'A credit or debit with this client_transaction_id is still running; retry after a short backoff.',
      })
    }
    if (result && result.id !== null) {
      if (key) key.answered = true
      if (result.notified) signalJobsQueued()
      return { account: presentAccount(result as AccountRow), replay: false }
    }
    const replayed = await explainRefusal(deps, ctx, accountId, direction, body, currency)
    if (replayed) return { account: replayed, replay: true }
  }
  // The account kept changing under us between attempt and explanation: let the caller retry.
  throw new ApiError('idempotency_request_in_progress', {
    message: 'The account is changing too fast; retry after a short backoff.',
  })
}

/**
 * Why an adjustment did not apply, in the interface's order: unknown account, an id already applied
 * (replay or adjustment_already_applied), currency, provisioning, status, funds. Returns the account for
 * a replay; null when nothing explains it any more (the state changed meanwhile: try again).
 */
async function explainRefusal(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  direction: Direction,
  body: AdjustBody,
  currency: string | null,
): Promise<AccountView | null> {
  const account = await requireAccount(deps.db, ctx, accountId)
  if (body.client_transaction_id !== undefined) {
    const entry = await repo.findEntryByClientTxn(deps.db, accountId, body.client_transaction_id)
    if (entry) {
      if (entry.type === direction && Math.abs(Number(entry.amount)) === body.amount)
        return presentAccount(account)
      throw new ApiError('adjustment_already_applied', {
        param: 'client_transaction_id',
        message: `client_transaction_id ${body.client_transaction_id} was already applied as a ${entry.type} of ${Math.abs(Number(entry.amount))}.`,
      })
    }
  }
  if (currency !== null && currency !== account.currency) {
    throw new ApiError('currency_mismatch', {
      param: 'currency',
      message: `The account holds ${account.currency}, not ${currency}.`,
    })
  }
  if (account.upstream_reference === null) throw new ApiError('account_not_provisioned')
  if (account.status !== 'open') throw new ApiError('account_blocked')
  const ledger = Number(account.ledger_balance)
  if (direction === 'debit' && availableBalance(account) < body.amount) {
    throw new ApiError('insufficient_funds', {
      param: 'amount',
      message: `The available balance (${availableBalance(account)}) is lower than ${body.amount}.`,
    })
  }
  if (direction === 'credit' && ledger + body.amount > MAX_BALANCE) {
    throw new ApiError('account_not_fundable', {
      param: 'amount',
      message: `An account holds at most ${MAX_BALANCE} minor units.`,
    })
  }
  return null
}

/** `GET /v1/accounts/{id}/entries`: the append-only ledger, newest first. */
export async function listEntries(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  page: PageParams,
): Promise<ListResult<EntryView>> {
  const account = await requireAccount(deps.db, ctx, accountId)
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: `/v1/accounts/${account.id}/entries`,
    page,
    sortKey: (r: repo.EntryRow) => String(r.seq),
    fetch: (bounds) => repo.listEntries(deps.db, account.id, bounds),
    present: presentEntry,
  })
}

/** Ledger entries of the caller's accounts created in [from, to), oldest first, in keyset batches: the `ledger` report reads these. */
export async function entriesCreatedIn(deps: AppDeps, window: CreatedWindow): Promise<EntryView[]> {
  return (await repo.entriesCreatedIn(deps.db, window)).map(presentEntry)
}
