import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import { scopeOfRow } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { emit } from '../events/index.js'
import { captureHold, releaseHold } from '../ledger/index.js'
import { presentTransaction, recordCapture, type TransactionView } from '../transactions/index.js'
import { availableBalance } from '../accounts/index.js'
import { adjustCounters } from '../authorization-rules/index.js'
import { captureMoney, captureRate, type CaptureAsk } from './capture-money.js'
import { inAccountCurrency, lockAccount, requirePending } from './engine.js'
import { presentAuthorization } from './present.js'
import * as repo from './repo.js'
import type { AuthorizationView } from './schemas.js'

/** Status once an authorization holds nothing more: captured money closes it, otherwise how the hold ended. */
export function finalStatus(captured: number, ending: 'reversed' | 'expired'): string {
  return captured > 0 ? 'closed' : ending
}

async function updated(
  trx: Db,
  auth: repo.AuthorizationRow,
  patch: Parameters<typeof repo.updateAuthorization>[2],
  now: Date,
  clockId: string | null = null,
): Promise<AuthorizationView> {
  const row = await repo.updateAuthorization(trx, auth.id, { ...patch, updated_at: now })
  await countedSpendMoved(trx, auth, row, now)
  const view = presentAuthorization(row)
  await emit(trx, { ...scopeOfRow(row), clockId }, 'authorization.updated', view, now)
  return view
}

/**
 * What an authorization counts for in its velocity limits' counters is its spend (what it holds plus what it
 * captured, docs/authorization-rules.md "Counters"): every move that changes it (reversal, capture, expiry) moves them
 * by the difference, in the caller's transaction under the account's lock.
 */
async function countedSpendMoved(
  trx: Db,
  before: repo.AuthorizationRow,
  after: repo.AuthorizationRow,
  now: Date,
): Promise<void> {
  const spend = (a: repo.AuthorizationRow) => Number(a.held_amount) + Number(a.captured_amount)
  await adjustCounters(trx, before.rule_counters, spend(after) - spend(before), now)
}

/**
 * A reversal: gives back `amount` of the hold (all of it when omitted), in the merchant's currency (converted
 * at the authorization's recorded rate and markup when it is foreign). Fully reversed, the
 * authorization is `reversed` (or `closed` when part of it was captured before).
 */
export async function reverseAuthorization(
  deps: AppDeps,
  auth0: repo.AuthorizationRow,
  amount: number | undefined,
  clockId: string | null = null,
): Promise<AuthorizationView> {
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    await lockAccount(trx, auth0.account_id)
    const auth = (await repo.findAuthorization(trx, auth0.id))!
    requirePending(auth, 'reversed')
    const held = Number(auth.held_amount)
    // `amount` is the merchant's: converted at the recorded rate when the authorization is foreign. Each converted
    // request rounds on its own, so giving back the whole may convert to up to one minor unit per request more
    // than is held: that much is forgiven (the hold is released whole), anything beyond it refused.
    const given = amount === undefined ? undefined : inAccountCurrency(auth, amount).amount
    const slack = auth.fx === null ? 0 : auth.request_history.length
    if (given !== undefined && given > held + slack) {
      throw new ApiError('invalid_parameter', {
        param: 'amount',
        message: `Authorization ${auth.id} holds ${held} ${auth.currency}; a reversal cannot exceed it.`,
      })
    }
    const release = given === undefined ? held : Math.min(given, held)
    await releaseHold(trx, auth.hold_id!, now, release)
    const left = held - release
    return updated(
      trx,
      auth,
      {
        held_amount: left,
        reversed_amount: Number(auth.reversed_amount) + release,
        status: left > 0 ? 'pending' : finalStatus(Number(auth.captured_amount), 'reversed'),
      },
      now,
      clockId,
    )
  })
}

/**
 * A capture (clearing): settles `amount` against the hold and creates a `pending` capture transaction.
 * Partial captures release the rest unless `close` is false; above the hold (or after the hold expired:
 * a late presentment) the excess is taken from the available balance, and refused with
 * `insufficient_funds` when it is not there, or `account_blocked` on a blocked account. Named in the merchant's
 * currency, a foreign authorization's capture is re-rated (`captureMoney`): it debits the amount at the rate now and
 * stands for what the same merchant amount was held at, so a moved rate is a partial or an over-capture. Under the
 * program's `fx_fee: separate` the markup is debited as its own `fx_fee` entry.
 */
export async function captureAuthorization(
  deps: AppDeps,
  auth0: repo.AuthorizationRow,
  ask: CaptureAsk,
  close: boolean,
  clockId: string | null = null,
): Promise<TransactionView> {
  const rate = await captureRate(deps, auth0, ask.currency)
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const account = await lockAccount(trx, auth0.account_id)
    const auth = (await repo.findAuthorization(trx, auth0.id))!
    if (auth.status !== 'pending' && auth.status !== 'expired') {
      throw new ApiError('authorization_invalid_state', {
        message: `Authorization ${auth.id} is ${auth.status}; only a pending or expired authorization can be captured.`,
      })
    }
    const held = Number(auth.held_amount)
    const money = captureMoney(auth, held, ask.amount, rate)
    // Everything the capture debits (the markup included when it is its own entry), and the part of the hold it
    // stands for: a re-rated capture left open stands for what its merchant amount was held at.
    const take = money.amount + money.fee
    const covers =
      rate?.quote && !close ? inAccountCurrency(auth, money.merchantAmount).amount : undefined
    const excess = take - Math.min(take, held, covers ?? take)
    // A blocked account keeps its balances: holds placed before still clear, but nothing beyond them.
    if (excess > 0 && account.status === 'blocked') {
      throw new ApiError('account_blocked', {
        param: 'amount',
        message: `Account ${account.id} is blocked: a capture may clear what the hold still holds (${held}), not ${take}.`,
      })
    }
    if (excess > availableBalance(account)) {
      throw new ApiError('insufficient_funds', {
        param: 'amount',
        message: `Capturing ${take} needs ${excess} beyond the hold; the available balance is ${availableBalance(account)}.`,
      })
    }
    await captureHold(trx, auth.hold_id!, take, now, { final: close, covers, fee: money.fee })
    const left = close ? 0 : held - Math.min(held, covers ?? take)
    await updated(
      trx,
      auth,
      {
        held_amount: left,
        captured_amount: Number(auth.captured_amount) + take,
        status: left > 0 ? 'pending' : 'closed',
      },
      now,
      clockId,
    )
    return presentTransaction(
      await recordCapture(trx, { authorization: auth, money, clockId }, now),
    )
  })
}

/** Releases what a pending authorization still holds and marks it `expired` (the 7-day sweep, or the simulator now). */
export async function expireOne(
  trx: Db,
  auth: repo.AuthorizationRow,
  now: Date,
  clockId: string | null = null,
): Promise<AuthorizationView> {
  await releaseHold(trx, auth.hold_id!, now)
  return updated(
    trx,
    auth,
    { held_amount: 0, status: finalStatus(Number(auth.captured_amount), 'expired') },
    now,
    clockId,
  )
}

/** Sandbox: expires a pending authorization now, as if its 7 days had passed. */
export async function expireAuthorization(
  deps: AppDeps,
  auth0: repo.AuthorizationRow,
  clockId: string | null = null,
): Promise<AuthorizationView> {
  return withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    await lockAccount(trx, auth0.account_id)
    const auth = (await repo.findAuthorization(trx, auth0.id))!
    requirePending(auth, 'expired')
    return expireOne(trx, auth, now, clockId)
  })
}
