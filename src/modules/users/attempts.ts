import type { Db } from '../../db/types.js'
import { randomBase62 } from '../../lib/crypto.js'
import * as repo from './repo.js'

/** Failed sign-in steps count over 15 minutes; a locked code step stays locked as long. */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000

/** One limit an attempt counts against: its key, and how many failures the window allows. */
export interface Limit {
  key: string
  max: number
}

/** An attempt that may go ahead: its rows hold its place under every limit until it is judged. */
export interface Reserved {
  ok: true
  attempt: string
  keys: string[]
  at: Date
}

export type Reservation = Reserved | { ok: false; retryAfterSeconds: number }

const windowStart = (now: Date) => new Date(now.getTime() - SIGN_IN_WINDOW_MS)

/** Seconds until a row written at `oldest` leaves the window (at least 1). */
function secondsLeft(oldest: Date, now: Date): number {
  return Math.max(1, Math.ceil((oldest.getTime() + SIGN_IN_WINDOW_MS - now.getTime()) / 1000))
}

/**
 * Reserves one attempt under every limit before anything is checked. Its rows are written first (one statement),
 * then each key's rows in the window are counted, its own included: the attempt goes ahead only when no key has
 * more than its `max`. Any store that commits the rows before counting them makes this atomic: of attempts racing
 * on one key, the last to write counts every earlier one, so a concurrent burst gets no more tries than a
 * sequential one, on every node sharing the database. A refused attempt takes its rows back (a refusal is not a
 * failure, and waiting out a limit does not extend it); a wrong one leaves them as its failures (`release` for a
 * right one).
 */
export async function reserveAttempt(
  db: Db,
  limits: readonly Limit[],
  now: Date,
): Promise<Reservation> {
  const attempt = randomBase62(22)
  const keys = limits.map((l) => l.key)
  await repo.insertFailures(db, keys, now, attempt)
  const counted = await repo.failuresSince(db, keys, windowStart(now))
  const over = limits.filter((l) => (counted.get(l.key)?.count ?? 0) > l.max)
  if (over.length === 0) {
    return { ok: true, attempt, keys, at: now }
  }
  await repo.deleteAttempt(db, keys, now, attempt)
  return {
    ok: false,
    retryAfterSeconds: Math.max(...over.map((l) => secondsLeft(counted.get(l.key)!.oldest, now))),
  }
}

/** The attempt was right: its rows are not failures. */
export async function release(db: Db, reserved: Reserved): Promise<void> {
  await repo.deleteAttempt(db, reserved.keys, reserved.at, reserved.attempt)
}

/**
 * The attempt was wrong: its rows stay, judged failures. Answers the most judged failures any of `keys` now has
 * in the window. Each attempt judges itself before counting, so of wrong attempts judged at once the last to
 * count sees every one; attempts still in flight (which may yet be refused and taken back) are not counted.
 */
export async function judgeWrong(
  db: Db,
  reserved: Reserved,
  keys: readonly string[],
): Promise<number> {
  await repo.judgeAttempt(db, reserved.keys, reserved.at, reserved.attempt)
  return repo.judgedFailuresSince(db, keys, windowStart(reserved.at))
}

/** Marks `key` (a lock) for the window from `now`. */
export async function mark(db: Db, key: string, now: Date): Promise<void> {
  await repo.insertFailures(db, [key], now, null)
}

/** Seconds until the mark of `key` leaves the window, or null when there is none in it. */
export async function markedFor(db: Db, key: string, now: Date): Promise<number | null> {
  const found = (await repo.failuresSince(db, [key], windowStart(now))).get(key)
  return found ? secondsLeft(found.oldest, now) : null
}
