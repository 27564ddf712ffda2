/**
 * Bucketed counters, as pure functions: what a velocity limit's window holds for one card, account or cardholder (and
 * what a card did in its last hour) is kept as a few buckets of two numbers each, so a decision reads one small row
 * instead of the history. A bucket is keyed by its start, in whole seconds since the epoch (as text, a JSON object's
 * key): a calendar window has one bucket per window (its start; `all_time` one bucket, 0); a rolling window of `s`
 * seconds has buckets of `ceil(s / 60)` seconds, so at most 61 of them count at any time.
 *
 * Precision of a rolling window: an authorization counts from its own instant until its bucket has wholly left the
 * window, i.e. for at least `s` and less than `s + bucket` seconds (never less than the window, at most a sixtieth of
 * it more, rounded up to a whole second). A limit is therefore never exceeded over any `s` seconds; a request may be
 * declined up to one bucket earlier than an exact sum would.
 */
import type { RuleWindow } from './rule.js'
import { windowResetsAt, windowStart } from './windows.js'

/** Two numbers per bucket: for a velocity limit `[amount, count]`, for a card's activity `[approved, declined]`. */
export type Buckets = Record<string, readonly [number, number]>

/** How many buckets a rolling window is cut into. */
export const ROLLING_BUCKETS = 60

/** A card's recent activity (authorization_count_1h, decline_count_1h): a rolling hour in minute buckets. */
export const ACTIVITY_WINDOW: RuleWindow = { type: 'rolling', seconds: 3600 }

/** The length of one bucket of a rolling window, in seconds. */
export function bucketSeconds(window: RuleWindow): number {
  if (window.type !== 'rolling' || window.seconds === null) return 0
  return Math.max(1, Math.ceil(window.seconds / ROLLING_BUCKETS))
}

const seconds = (at: Date) => Math.floor(at.getTime() / 1000)

/** The bucket an authorization made at `at` counts in. */
export function bucketOf(window: RuleWindow, at: Date): number {
  if (window.type === 'all_time') return 0
  if (window.type === 'rolling') {
    const b = bucketSeconds(window)
    return Math.floor(seconds(at) / b) * b
  }
  return seconds(windowStart(window, at)!)
}

/**
 * The first bucket that still counts at `now`: the current calendar window's, or for a rolling window the one that
 * holds the window's start (`now − s`), which still overlaps the window.
 */
export function liveFrom(window: RuleWindow, now: Date): number {
  if (window.type === 'all_time') return 0
  if (window.type === 'rolling') {
    const b = bucketSeconds(window)
    return Math.floor((now.getTime() / 1000 - window.seconds!) / b) * b
  }
  return seconds(windowStart(window, now)!)
}

/** The two numbers summed over the buckets that count at `now`. */
export function sumLive(
  buckets: Buckets | null | undefined,
  window: RuleWindow,
  now: Date,
): [number, number] {
  const from = liveFrom(window, now)
  let first = 0
  let second = 0
  for (const [key, pair] of Object.entries(buckets ?? {})) {
    if (Number(key) < from) continue
    first += Number(pair[0])
    second += Number(pair[1])
  }
  return [first, second]
}

/**
 * When what counts at `now` has all left the window: the next calendar window's start; for a rolling window, when the
 * newest bucket that holds something leaves; null for `all_time` (never) or when nothing counts.
 */
export function countedUntil(
  buckets: Buckets | null | undefined,
  window: RuleWindow,
  now: Date,
): Date | null {
  if (window.type === 'all_time') return null
  if (window.type !== 'rolling') return windowResetsAt(window, now)
  const from = liveFrom(window, now)
  const keys = Object.entries(buckets ?? {})
    .filter(([key, [a, n]]) => Number(key) >= from && (Number(a) > 0 || Number(n) > 0))
    .map(([key]) => Number(key))
  if (keys.length === 0) return null
  return new Date((Math.max(...keys) + bucketSeconds(window) + window.seconds!) * 1000)
}

/** When the oldest bucket that holds something at `now` leaves a rolling window (what `resets_at` answers); null if none. */
export function oldestLeavesAt(
  buckets: Buckets | null | undefined,
  window: RuleWindow,
  now: Date,
): Date | null {
  if (window.type !== 'rolling')
    return window.type === 'all_time' ? null : windowResetsAt(window, now)
  const from = liveFrom(window, now)
  const keys = Object.entries(buckets ?? {})
    .filter(([key, [a, n]]) => Number(key) >= from && (Number(a) > 0 || Number(n) > 0))
    .map(([key]) => Number(key))
  if (keys.length === 0) return null
  return new Date((Math.min(...keys) + bucketSeconds(window) + window.seconds!) * 1000)
}

/**
 * `buckets` with `deltas` added (a copy): buckets before `keepFrom` dropped; `create` false adds only to buckets that are
 * there (an adjustment of an authorization whose bucket has left every window changes nothing). Sums stay at 0 or above.
 * The same arithmetic as the SQL of `mergedBucketsSql`, for replays and tests.
 */
export function addToBuckets(
  buckets: Buckets,
  deltas: Buckets,
  keepFrom: number | null,
  create = true,
): Buckets {
  const out: Record<string, [number, number]> = {}
  for (const [key, [a, n]] of Object.entries(buckets)) out[key] = [Number(a), Number(n)]
  for (const [key, [a, n]] of Object.entries(deltas)) {
    const had = out[key]
    if (!had && !create) continue
    out[key] = [Math.max(0, (had?.[0] ?? 0) + a), Math.max(0, (had?.[1] ?? 0) + n)]
  }
  if (keepFrom !== null)
    for (const key of Object.keys(out)) if (Number(key) < keepFrom) delete out[key]
  return out
}

/** When the bucket `bucket` of `window` has left it for good (null for `all_time`: never). */
export function bucketLeavesAt(window: RuleWindow, bucket: number): Date | null {
  if (window.type === 'all_time') return null
  if (window.type === 'rolling')
    return new Date((bucket + bucketSeconds(window) + window.seconds!) * 1000)
  return windowResetsAt(window, new Date(bucket * 1000))
}
