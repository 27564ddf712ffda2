import { sql } from 'kysely'
import { purgeInBatches, type PurgeOptions } from '../../db/purge.js'
import type { Db } from '../../db/types.js'
import { ACTIVITY_WINDOW, type Buckets } from './buckets.js'
import { ACTIVITY_TOUCH_SECONDS, mergedBucketsSql } from './decision-plan.js'

/** The counters and buckets an approved authorization was counted in (`authorizations.rule_counters`). */
export type CountedIn = readonly (readonly [string, number])[]

/**
 * Adds `delta` (minor units, negative to free) to what an authorization counts for in each counter and bucket it was
 * counted in: a reversal or an expiry frees what it stops holding, a capture above or below the hold moves it by the
 * difference, an increment adds its increase. Counts do not move (an approved authorization stays one). Only buckets
 * still there change: one that has left its window counts for nothing any more. Run in the caller's transaction,
 * which already holds the authorization's account lock; the counters' rows are locked in key order (accounts first,
 * then counters, as every decision statement does).
 */
export async function adjustCounters(
  trx: Db,
  countedIn: CountedIn,
  delta: number,
  now: Date,
): Promise<void> {
  if (countedIn.length === 0 || delta === 0) return
  // A bucket named twice moves once.
  const moves = new Map<string, [string, number, number]>()
  for (const [key, bucket] of countedIn) moves.set(`${key} ${bucket}`, [key, bucket, delta])
  await moveCounterBuckets(trx, [...moves.values()], now)
}

/**
 * `adjustCounters` for several amounts at once: each `[key, bucket, delta]` adds `delta` to that bucket's amount (the
 * deltas of a bucket named twice are summed), in one statement. What several expiries free together: a bucket's sum
 * can only fall to zero, so one sum frees what they free one by one.
 */
export async function moveCounterBuckets(
  trx: Db,
  moves: readonly (readonly [string, number, number])[],
  now: Date,
): Promise<void> {
  const deltas = new Map<string, Record<string, [number, number]>>()
  for (const [key, bucket, delta] of moves) {
    if (delta === 0) continue
    const of = deltas.get(key) ?? {}
    of[String(bucket)] = [(of[String(bucket)]?.[0] ?? 0) + delta, 0]
    deltas.set(key, of)
  }
  if (deltas.size === 0) return
  const items = JSON.stringify([...deltas].map(([key, d]) => ({ key, deltas: d as Buckets })))
  await sql`
    WITH adjustment AS (SELECT * FROM json_to_recordset(${items}::json) AS a(key text, deltas jsonb)),
    held AS MATERIALIZED (
      SELECT key FROM authorization_rule_counters WHERE key = ANY (ARRAY(SELECT key FROM adjustment)) ORDER BY key FOR UPDATE
    )
    UPDATE authorization_rule_counters AS rc
    SET buckets = ${mergedBucketsSql(sql`rc.buckets`, sql`a.deltas`, null, false)}, updated_at = ${now}
    FROM adjustment AS a WHERE rc.key = a.key AND rc.key IN (SELECT key FROM held)`.execute(trx)
}

/** How often the counters and activity rows whose contents have all left their windows are purged. */
export const COUNTER_PURGE_EVERY_MS = 10 * 60 * 1000

/**
 * Deletes the velocity counters nothing of which counts any more (`expires_at` passed: the newest bucket they hold has
 * left its window, or they were made and never counted in), in short batches along `authorization_rule_counters_expiry`.
 * A decision that read one as it went is decided again (its guard finds the row gone); an adjustment of it finds
 * nothing to adjust, which is right: what it held counted for nothing.
 */
export async function purgeCounters(db: Db, now: Date, options?: PurgeOptions): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'authorization_rule_counters',
    key: 'key',
    orderBy: 'expires_at',
    where: sql`expires_at IS NOT NULL AND expires_at < ${now}`,
  })
}

/**
 * Deletes the cards' activity rows last written more than an hour and a minute ago (nothing in them counts, and no
 * decision on the card has happened since): a card that needs one again counts its last hour afresh, which holds
 * nothing either. A row's `updated_at` may lag its last write by up to `ACTIVITY_TOUCH_SECONDS`, which the cut-off
 * allows for.
 */
export async function purgeActivity(db: Db, now: Date, options?: PurgeOptions): Promise<number> {
  const before = new Date(
    now.getTime() - (ACTIVITY_WINDOW.seconds! + 60 + ACTIVITY_TOUCH_SECONDS) * 1000,
  )
  return purgeInBatches(db, {
    ...options,
    table: 'authorization_rule_activity',
    key: 'card_id',
    orderBy: 'updated_at',
    where: sql`updated_at < ${before}`,
  })
}

/** The buckets of the counters `keys` (a key no row holds is absent: nothing counted yet). A plain read, no lock. */
export async function findCounters(db: Db, keys: readonly string[]): Promise<Map<string, Buckets>> {
  if (keys.length === 0) return new Map()
  const rows = await db
    .selectFrom('authorization_rule_counters')
    .select(['key', 'buckets'])
    .where('key', 'in', keys)
    .execute()
  return new Map(rows.map((r) => [r.key, r.buckets as Buckets]))
}
