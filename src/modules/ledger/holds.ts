import type { Db } from '../../db/types.js'
import { ApiError } from '../../http/errors.js'
import { newId } from '../../lib/ids.js'
import { availableBalance, type AccountRow } from '../accounts/index.js'
import { postMovement, postMovements, type Movement } from './post.js'
import * as repo from './repo.js'

export type HoldRow = repo.HoldRow

/** Why a hold was not placed: authorizations record it as their decline reason. */
export type HoldRefusal = 'insufficient_funds' | 'account_blocked' | 'currency_mismatch'

/** Business outcome of placing or raising a hold: a value, not an exception. */
export type HoldDecision =
  | { approved: true; hold: HoldRow; account: AccountRow }
  | { approved: false; reason: HoldRefusal; account: AccountRow }

export interface HoldChange {
  hold: HoldRow
  account: AccountRow
}

export interface PlaceHoldInput {
  accountId: string
  amount: number
  currency: string
  /** The object the hold is for (an authorization id); shown on the ledger entries. */
  sourceId?: string | null
  expiresAt?: Date | null
}

async function lock(trx: Db, accountId: string): Promise<AccountRow> {
  const account = await repo.lockAccount(trx, accountId)
  if (!account) throw new ApiError('account_not_found')
  return account
}

/** Locks the hold's account, then reads the hold (holds only change under their account's lock). */
async function lockHold(trx: Db, holdId: string): Promise<{ hold: HoldRow; account: AccountRow }> {
  const account = await repo.lockAccountOfHold(trx, holdId)
  const hold = account ? await repo.findHold(trx, holdId) : undefined
  if (!account || !hold) throw new Error(`no hold ${holdId}`)
  return { hold, account }
}

/**
 * Reserves `amount` of the available balance, in the caller's transaction. Refused, as a value, when the
 * account is blocked, in another currency or short. The hold, its entry and the held balance are written
 * by the plan batched authorization decisions splice into their statement (`holdsCtes`), so this path
 * runs production's SQL.
 */
export async function placeHold(trx: Db, input: PlaceHoldInput, now: Date): Promise<HoldDecision> {
  if (!Number.isSafeInteger(input.amount) || input.amount <= 0)
    throw new Error('hold amount must be a positive integer')
  const account = await lock(trx, input.accountId)
  if (account.status !== 'open') return { approved: false, reason: 'account_blocked', account }
  if (input.currency.toUpperCase() !== account.currency)
    return { approved: false, reason: 'currency_mismatch', account }
  if (availableBalance(account) < input.amount)
    return { approved: false, reason: 'insufficient_funds', account }
  const holdId = newId('hold')
  await repo.placeHolds(
    trx,
    [
      {
        accountId: account.id,
        amount: input.amount,
        holdId,
        entryId: newId('le'),
        sourceId: input.sourceId ?? null,
        expiresAt: input.expiresAt ?? null,
      },
    ],
    now,
  )
  return {
    approved: true,
    hold: (await repo.findHold(trx, holdId))!,
    account: (await repo.lockAccount(trx, account.id))!,
  }
}

/** Raises an open hold by `amount` (an incremental authorization), under the same rules as placing one. */
export async function incrementHold(
  trx: Db,
  holdId: string,
  amount: number,
  now: Date,
): Promise<HoldDecision> {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new Error('increment must be a positive integer')
  const { hold, account } = await lockHold(trx, holdId)
  if (hold.status !== 'open') throw new Error(`hold ${holdId} is ${hold.status}`)
  if (account.status !== 'open') return { approved: false, reason: 'account_blocked', account }
  if (availableBalance(account) < amount)
    return { approved: false, reason: 'insufficient_funds', account }
  const updatedHold = await repo.updateHold(trx, hold.id, {
    amount: Number(hold.amount) + amount,
    remaining: Number(hold.remaining) + amount,
    updated_at: now,
  })
  const updated = await postMovement(
    trx,
    account,
    { type: 'hold', ledgerDelta: 0, heldDelta: amount, sourceId: hold.source_id ?? hold.id },
    now,
  )
  return { approved: true, hold: updatedHold, account: updated }
}

/**
 * Gives back what a hold still holds (all of it, or `amount` of it: a partial reversal). Works on
 * blocked accounts too. Releasing a closed hold changes nothing.
 */
export async function releaseHold(
  trx: Db,
  holdId: string,
  now: Date,
  amount?: number,
): Promise<HoldChange> {
  const { hold, account } = await lockHold(trx, holdId)
  const remaining = Number(hold.remaining)
  const release = Math.min(amount ?? remaining, remaining)
  if (release <= 0) return { hold, account }
  const left = remaining - release
  const updatedHold = await repo.updateHold(trx, hold.id, {
    remaining: left,
    released: Number(hold.released) + release,
    status: left > 0 ? 'open' : 'closed',
    updated_at: now,
  })
  const updated = await postMovement(
    trx,
    account,
    {
      type: 'hold_release',
      ledgerDelta: 0,
      heldDelta: -release,
      sourceId: hold.source_id ?? hold.id,
    },
    now,
  )
  return { hold: updatedHold, account: updated }
}

/** A hold to give back whole at `at` (`releaseHolds`). */
export interface HoldRelease {
  holdId: string
  at: Date
}

/**
 * `releaseHold` of several holds of one account, each whole and at its own time, in the order given (time order):
 * the same `hold_release` entries, each dated at its hold's time with the balances right after it, and the same
 * closed holds, in a fixed number of statements (the account locked, the holds read, then one write each of the
 * holds, the balances and the entries). A hold that holds nothing any more changes nothing. Answers the account.
 */
export async function releaseHolds(
  trx: Db,
  accountId: string,
  releases: readonly HoldRelease[],
): Promise<AccountRow> {
  const account = await lock(trx, accountId)
  const found = await repo.findHoldsOfAccount(
    trx,
    accountId,
    releases.map((r) => r.holdId),
  )
  const holds = new Map(found.map((h) => [h.id, h]))
  const movements: Movement[] = []
  const closed: { id: string; released: number; at: Date }[] = []
  for (const { holdId, at } of releases) {
    const hold = holds.get(holdId)
    if (!hold) throw new Error(`no hold ${holdId} on account ${accountId}`)
    const release = Number(hold.remaining)
    if (release <= 0) continue
    holds.set(holdId, { ...hold, remaining: 0 })
    closed.push({ id: hold.id, released: Number(hold.released) + release, at })
    movements.push({
      type: 'hold_release',
      ledgerDelta: 0,
      heldDelta: -release,
      sourceId: hold.source_id ?? hold.id,
      at,
    })
  }
  if (movements.length === 0) return account
  await repo.closeHolds(trx, closed)
  return postMovements(trx, account, movements, movements[movements.length - 1]!.at!)
}

/** How a capture takes from its hold (`captureHold`). */
export interface CaptureOptions {
  /** Release what the hold still holds after the capture (default true). */
  final?: boolean
  /**
   * The most of the hold this capture stands for (default `amount`): a capture re-rated at clearing debits
   * `amount` but stands for what the same merchant amount was held at. Above `amount`, the difference is released
   * (`hold_release`) even when the capture is not final; below it, the rest of `amount` comes from the balance.
   */
  covers?: number
  /** The part of `amount` the ledger shows as its own `fx_fee` entry (the markup of a foreign spend); default 0. */
  fee?: number
}

/**
 * Settles `amount` against a hold: the ledger balance falls by `amount` and the hold gives up what it
 * covers of it. Partial capture leaves the rest held unless `final` (the default) releases it; a
 * capture above the hold (or on a closed hold) takes the excess from the balance, as networks may.
 * With a `fee`, the debit is two entries, `capture` (amount − fee) then `fx_fee` (fee), the hold covering
 * the capture first. Works on blocked accounts too.
 */
export async function captureHold(
  trx: Db,
  holdId: string,
  amount: number,
  now: Date,
  options: CaptureOptions = {},
): Promise<HoldChange> {
  if (!Number.isSafeInteger(amount) || amount <= 0)
    throw new Error('capture must be a positive integer')
  const fee = options.fee ?? 0
  if (!Number.isSafeInteger(fee) || fee < 0 || fee >= amount)
    throw new Error('a capture fee must be an integer from 0 to below the capture')
  const { hold, account } = await lockHold(trx, holdId)
  const remaining = Number(hold.remaining)
  const stands = options.covers ?? amount
  const covered = Math.min(amount, remaining, stands)
  const source = hold.source_id ?? hold.id
  const spend = amount - fee
  const movements: Movement[] = [
    {
      type: 'capture',
      ledgerDelta: -spend,
      heldDelta: -Math.min(covered, spend),
      sourceId: source,
    },
  ]
  if (fee > 0) {
    movements.push({
      type: 'fx_fee',
      ledgerDelta: -fee,
      heldDelta: -(covered - Math.min(covered, spend)),
      sourceId: source,
    })
  }
  let left = remaining - covered
  const release = (options.final ?? true) ? left : Math.min(left, Math.max(0, stands - amount))
  let released = Number(hold.released)
  if (release > 0) {
    movements.push({ type: 'hold_release', ledgerDelta: 0, heldDelta: -release, sourceId: source })
    released += release
    left -= release
  }
  // The capture (and its fee) and the release: one write of the balances, one insert of the entries.
  const updated = await postMovements(trx, account, movements, now)
  const updatedHold = await repo.updateHold(trx, hold.id, {
    remaining: left,
    captured: Number(hold.captured) + amount,
    released,
    status: left > 0 ? 'open' : 'closed',
    updated_at: now,
  })
  return { hold: updatedHold, account: updated }
}

/** A hold by id (authorizations keep the id they were given). */
export async function findHold(db: Db, holdId: string): Promise<HoldRow | undefined> {
  return repo.findHold(db, holdId)
}
