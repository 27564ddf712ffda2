import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import { newId } from '../../lib/ids.js'
import { signalJobsQueued } from '../../jobs/wakeup.js'
import { type CountedIn, moveCounterBuckets } from '../authorization-rules/index.js'
import { cardIdsOnClock } from '../cards/index.js'
import type { ClockSweep, DueOnClock } from '../clocks/index.js'
import { releaseHolds } from '../ledger/index.js'
import { lockAccount } from './engine.js'
import { authorizationsOfAccount, expireAll, type ExpiryWrite } from './expiry-repo.js'
import { expireOne, finalStatus } from './operations.js'
import { presentAuthorization } from './present.js'
import * as repo from './repo.js'
import { wallTime } from '../../lib/object-clock.js'

/** Whether a pending authorization's expiry is due at `at` (not yet on its clock: it is left alone). */
function dueAt(auth: repo.AuthorizationRow | undefined, at: Date): auth is repo.AuthorizationRow {
  return (
    auth !== undefined &&
    auth.status === 'pending' &&
    auth.expires_at !== null &&
    new Date(auth.expires_at).getTime() <= at.getTime()
  )
}

/**
 * Frees what expiring authorizations counted for in their velocity counters (`countedSpendMoved` of each: its hold),
 * added up per counter bucket, in one statement (`moveCounterBuckets`: a counter's buckets can only fall to zero, so
 * one sum frees what the expiries one by one free), dated at the last expiry.
 */
async function freeCounters(
  trx: Db,
  expiring: readonly { auth: repo.AuthorizationRow; at: Date }[],
): Promise<void> {
  const moves: [string, number, number][] = []
  for (const { auth } of expiring) {
    const held = Number(auth.held_amount)
    if (held === 0) continue
    for (const [key, buckets] of groupBuckets(auth.rule_counters))
      for (const bucket of buckets) moves.push([key, bucket, -held])
  }
  if (moves.length > 0) await moveCounterBuckets(trx, moves, expiring[expiring.length - 1]!.at)
}

/** An authorization's counters and buckets, each once (one authorization moves a bucket it names twice once). */
function groupBuckets(countedIn: CountedIn): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>()
  for (const [key, bucket] of countedIn) {
    const of = out.get(key) ?? new Set<number>()
    of.add(bucket)
    out.set(key, of)
  }
  return out
}

/**
 * The expiry of several authorizations of account `accountId` (under sandbox clock `clockId`, or none) at their due times
 * (`dues`, in time order), in the caller's transaction and in a fixed number of statements whatever their number,
 * writing what `expireOne` writes for each: the account locked, the authorizations read, their holds released (one
 * `hold_release` entry each, at its time: `releaseHolds`), their counters freed, then the authorizations (`expired`,
 * or `closed` when part was captured; `updated_at` the due time) and their `authorization.updated` events, in time
 * order, in one statement. An authorization no longer pending, of another account, or not yet due at its time is
 * left alone, so an advance that runs again, or two at once, expires nothing twice. Answers how many it expired.
 */
export async function expireManyOfAccount(
  trx: Db,
  accountId: string,
  dues: readonly DueOnClock[],
  clockId: string | null,
): Promise<number> {
  await lockAccount(trx, accountId)
  const rows = await authorizationsOfAccount(
    trx,
    accountId,
    dues.map((d) => d.id),
  )
  const byId = new Map(rows.map((r) => [r.id, r]))
  const expiring: { auth: repo.AuthorizationRow; at: Date }[] = []
  for (const { id, at } of dues) {
    const auth = byId.get(id)
    if (!dueAt(auth, at)) continue
    byId.delete(id)
    expiring.push({ auth, at })
  }
  if (expiring.length === 0) return 0
  await releaseHolds(
    trx,
    accountId,
    expiring.map(({ auth, at }) => ({ holdId: auth.hold_id!, at })),
  )
  await freeCounters(trx, expiring)
  const wall = wallTime(clockId, expiring[expiring.length - 1]!.at)
  const writes = expiring.map(({ auth, at }): ExpiryWrite => {
    const status = finalStatus(Number(auth.captured_amount), 'expired')
    const after: repo.AuthorizationRow = { ...auth, held_amount: 0, status, updated_at: at }
    return {
      id: auth.id,
      heldAmount: 0,
      status,
      at,
      eventId: newId('evt', wall),
      organizationId: auth.organization_id,
      environment: auth.environment,
      clockId,
      view: presentAuthorization(after),
    }
  })
  const { done, notified } = await expireAll(trx, writes, wall)
  if (notified) signalJobsQueued()
  if (done.length !== writes.length)
    throw new Error(`authorizations of account ${accountId} changed under its lock`)
  return done.length
}

/** How often the expiry sweep looks for holds past their lifetime. */
export const EXPIRY_SWEEP_MS = 60_000
/** Holds the expiry sweep reads at a time, oldest due first. */
const EXPIRY_PAGE = 200

/**
 * Expires every pending authorization whose `expires_at` has passed (those under a sandbox clock wait for its
 * advance); returns how many. A page of the oldest due, an account's together in one short transaction
 * (`expireManyOfAccount`: a fixed number of statements however many it holds), each a conditional expiry, so a
 * sweep running beside another, or beside a capture, expires nothing twice.
 */
export async function expireDue(deps: AppDeps): Promise<number> {
  let total = 0
  for (;;) {
    const due = await repo.dueForExpiry(deps.db, deps.clock.now(), EXPIRY_PAGE)
    const byAccount = new Map<string, string[]>()
    for (const { id, account_id } of due) {
      const ids = byAccount.get(account_id)
      if (ids) ids.push(id)
      else byAccount.set(account_id, [id])
    }
    for (const [accountId, ids] of byAccount) {
      const now = deps.clock.now()
      const dues = ids.map((id) => ({ id, at: now }))
      total += await withTx(deps.db, (trx) => expireManyOfAccount(trx, accountId, dues, null))
    }
    if (due.length < EXPIRY_PAGE) return total
  }
}

/**
 * A sandbox clock's hold expiry (docs/sandbox-clocks.md), run by the clock's advance in time order with the other
 * sweeps: the pending authorizations under the clock whose `expires_at` is at or before the advance's target, and
 * the expiry of one, the wall-time sweep's conditional update (an authorization no longer pending, or not yet due
 * on the clock, is left alone), so an advance that runs again expires nothing twice.
 */
export const holdExpiryOnClock: ClockSweep = {
  async due(deps, clockId, until, limit) {
    // The clock's cards, through its cardholders (their modules' reads): a sandbox clock holds a test's few.
    const cardIds = await cardIdsOnClock(deps.db, clockId)
    const rows = await repo.dueForExpiryOfCards(deps.db, cardIds, until, limit)
    // Keyed by account: expiries of different accounts run side by side, those of one account in time order.
    return rows.map((r) => ({ id: r.id, at: r.expires_at, key: r.account_id }))
  },
  async run(deps, clockId, id) {
    const now = deps.clock.now()
    return withTx(deps.db, async (trx) => {
      const found = await repo.findAuthorization(trx, id)
      if (!found) return false
      await lockAccount(trx, found.account_id)
      const auth = await repo.findAuthorization(trx, id)
      if (!dueAt(auth, now)) return false
      await expireOne(trx, auth, now, clockId)
      return true
    })
  },
  // Several authorizations of one account (the key), in time order: one transaction, a fixed number of statements.
  async runMany(deps, clockId, dues) {
    const accountId =
      dues[0]!.key ?? (await repo.findAuthorization(deps.db, dues[0]!.id))?.account_id
    if (accountId === undefined) return 0
    return withTx(deps.db, (trx) => expireManyOfAccount(trx, accountId, dues, clockId))
  },
}
