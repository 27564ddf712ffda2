import { sql, type RawBuilder } from 'kysely'
import type { Db } from './types.js'

/** Rows one purge statement removes at most, unless the purge says otherwise. */
export const PURGE_BATCH = 2000
/** The pause between two statements of one purge (0: only yield to the event loop). */
export const PURGE_PAUSE_MS = 10
/**
 * A purge rests at least this many times as long as its last statement took, so that working off a backlog takes at
 * most 40 % of one connection's time. On the scale benchmark's large database (bench/README.md, "Retention while
 * serving") a purge at full speed (a 50 ms statement, then 10 ms of pause) took a core from the credits beside it and
 * tripled their p99; resting 1.5 times the statement kept their p99 within 1.13 of a run alone while still removing
 * some 25,000 idempotency keys or 8,700 events a second, more than the machine's peak load makes.
 */
export const PURGE_REST_FACTOR = 1.5

/** What a caller (the schedules, the benchmark, a test) may tune of a purge. */
export interface PurgeOptions {
  /** Rows per statement. */
  batch?: number
  /** Milliseconds between statements, at least. */
  pauseMs?: number
  /** The pause is at least this many times the last statement's duration (`PURGE_REST_FACTOR`; 0: `pauseMs` only). */
  restFactor?: number
  /** Told after each statement with the rows it removed (tests count the statements, a benchmark the rate). */
  onBatch?: (removed: number) => void
}

export interface PurgeSpec extends PurgeOptions {
  table: string
  /**
   * The rows past their retention: a condition over the table's own columns that an index answers (the inner
   * SELECT walks that index and stops after `batch` rows). The DELETE checks it again, so a row changed between
   * the two (a session seen again, a dead job revived) is kept.
   */
  where: RawBuilder<unknown>
  /**
   * The column the DELETE finds the chosen rows by: a unique key (its index), or `ctid` (the row's physical
   * address; any table, no key needed: for tables whose key spans several columns or that have none).
   */
  key?: string
  /**
   * The column of the index `where` is answered by (oldest first). Ordering by it keeps the planner on that index
   * however much of the table is past retention (without it a first purge of a large backlog may pick a sequential
   * scan, which re-reads the rows earlier batches left dead on every batch).
   */
  orderBy?: string
}

/** How long a purge rests after a statement that took `tookMs`: `pauseMs`, or `restFactor` times the statement if longer. */
export function restAfter(tookMs: number, options: PurgeOptions = {}): number {
  return Math.max(
    options.pauseMs ?? PURGE_PAUSE_MS,
    tookMs * (options.restFactor ?? PURGE_REST_FACTOR),
  )
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)))
}

/**
 * Deletes the rows of `spec.where` a bounded batch at a time, each batch its own short statement (and its own
 * transaction: call it with the pool, never inside `withTx`), pausing between batches (at least
 * `PURGE_REST_FACTOR` times the last statement's time) so requests on the same database go first; runs until a
 * batch comes back short and answers how many rows went. Never one DELETE of an unbounded set: a backlog of a
 * million rows is 500 statements of 2000, each holding its row locks for milliseconds. The same SQL runs on PGlite
 * and PostgreSQL.
 */
export async function purgeInBatches(db: Db, spec: PurgeSpec): Promise<number> {
  const batch = spec.batch ?? PURGE_BATCH
  if (!Number.isInteger(batch) || batch < 1)
    throw new RangeError(`purge batch must be a positive integer, got ${batch}`)
  const table = sql.table(spec.table)
  const key = sql.ref(spec.key ?? 'ctid')
  const order = spec.orderBy ? sql` ORDER BY ${sql.ref(spec.orderBy)}` : sql``
  let total = 0
  for (;;) {
    const started = performance.now()
    // `= ANY(ARRAY(subquery))`: the chosen keys are read first (an InitPlan), then found by key (a TID scan or
    // the unique index), whatever the planner thinks of the backlog's size.
    const res = await sql`DELETE FROM ${table}
      WHERE ${key} = ANY(ARRAY(SELECT ${key} FROM ${table} WHERE ${spec.where}${order} LIMIT ${batch}))
      AND ${spec.where}`.execute(db)
    const removed = Number(res.numAffectedRows ?? 0)
    total += removed
    spec.onBatch?.(removed)
    if (removed < batch) return total
    await pause(restAfter(performance.now() - started, spec))
  }
}
