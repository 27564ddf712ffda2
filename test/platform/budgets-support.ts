import { PGlite } from '@electric-sql/pglite'
import { sql } from 'kysely'
import pg from 'pg'
import type { Db } from '../../src/db/types.js'

/**
 * Counts what a request costs the database, whatever machine runs it: every query sent to PostgreSQL (on any
 * connection: the pool's, the idempotency locks') or to the embedded database is recorded while a measurement
 * runs. Installed by patching the drivers' `query` before the app opens its connections, so the app's code
 * runs unchanged. One query sent is one round trip: `pg` sends each with its Sync and waits for the answer, and
 * PGlite runs each on its one session.
 */

/** A query sent while measuring: its SQL, and the connection it went on. */
export interface Sent {
  sql: string
  connection: string
}

let recording: Sent[] | null = null
let pending = 0
let lastSentAt = 0
const connectionNames = new WeakMap<object, string>()

let nextConnection = 1

function nameOf(client: object, kind: string): string {
  let name = connectionNames.get(client)
  if (!name) {
    name = `${kind}#${nextConnection++}`
    connectionNames.set(client, name)
  }
  return name
}

function record(client: object, text: unknown, kind: string): void {
  lastSentAt = performance.now()
  if (!recording) return
  const config = client as { connectionParameters?: { application_name?: string } }
  const app = config.connectionParameters?.application_name
  recording.push({
    sql: String(text),
    connection: app ? `${app} ${nameOf(client, kind)}` : nameOf(client, kind),
  })
}

/** Counts a query until its answer has come back, so a measurement waits for queries sent in the background. */
function tracked<T>(result: T): T {
  if (result && typeof (result as { then?: unknown }).then === 'function') {
    pending++
    ;(result as unknown as Promise<unknown>).then(
      () => {
        pending--
      },
      () => {
        pending--
      },
    )
  }
  return result
}

let installed = false

/** Patches `pg` and PGlite to report their queries; call before the app opens its database. */
export function installQueryRecorder(): void {
  if (installed) return
  installed = true
  const pgQuery = pg.Client.prototype.query as (...args: unknown[]) => unknown
  type Patchable = { query: (...args: unknown[]) => unknown }
  ;(pg.Client.prototype as unknown as Patchable).query = function (
    this: object,
    ...args: unknown[]
  ) {
    const first = args[0] as string | { text?: string }
    record(this, typeof first === 'string' ? first : first?.text, 'pg')
    return tracked(pgQuery.apply(this, args))
  }
  const pgliteQuery = PGlite.prototype.query as (...args: unknown[]) => unknown
  ;(PGlite.prototype as unknown as Patchable).query = function (this: object, ...args: unknown[]) {
    record(this, args[0], 'pglite')
    return tracked(pgliteQuery.apply(this, args))
  }
}

const TRANSACTION_CONTROL = /^\s*(begin|commit|rollback|savepoint|release|start transaction)\b/i

/** What a request cost: every query it sent (round trips), those that do work (statements), and the rows it locked. */
export interface Cost {
  sent: Sent[]
  /** Queries sent and waited for, transaction control (BEGIN, COMMIT, SAVEPOINT …) included. */
  roundTrips: number
  /** The queries that read or write (round trips less transaction control). */
  statements: number
  /** Rows that existed before and were updated, deleted or locked (FOR UPDATE/SHARE, foreign-key checks), by table. */
  rowsLocked: Record<string, number>
}

export function totalRows(rows: Record<string, number>): number {
  return Object.values(rows).reduce((a, b) => a + b, 0)
}

/** Waits until no query is on its way and none was sent for 15 ms (background work such as an advisory unlock). */
async function settled(): Promise<void> {
  for (;;) {
    await new Promise((r) => setTimeout(r, 15))
    if (pending === 0 && performance.now() - lastSentAt >= 15) return
  }
}

type RowVersions = Map<string, string>

/**
 * The version of every row of every table with an `id` column: its xmin (changes when the row is updated)
 * and xmax (changes when it is locked, FOR UPDATE/SHARE or a foreign-key check's KEY SHARE, or deleted).
 */
async function rowVersions(db: Db): Promise<RowVersions> {
  // The tables are read from the catalogue once: its views are slow, and the budget's steady state should not wait for them.
  versionsQuery ??= (async () => {
    const { rows: tables } = await sql<{ table_name: string }>`
      SELECT c.relname AS table_name FROM pg_class AS c JOIN pg_namespace AS n ON n.oid = c.relnamespace
      JOIN pg_attribute AS a ON a.attrelid = c.oid AND a.attname = 'id' AND NOT a.attisdropped
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') ORDER BY 1`.execute(db)
    return tables
      .map(
        (t) =>
          `SELECT '${t.table_name}' AS t, id::text AS id, xmin::text || '/' || xmax::text AS v FROM "${t.table_name}"`,
      )
      .join(' UNION ALL ')
  })()
  const { rows } = await sql<{
    t: string
    id: string
    v: string
  }>`${sql.raw(await versionsQuery)}`.execute(db)
  return new Map(rows.map((r) => [`${r.t}\u0000${r.id}`, r.v]))
}
let versionsQuery: Promise<string> | undefined

function lockedBetween(before: RowVersions, after: RowVersions): Record<string, number> {
  const locked: Record<string, number> = {}
  for (const [key, version] of before) {
    if (after.get(key) === version) continue
    const table = key.split('\u0000')[0]
    locked[table] = (locked[table] ?? 0) + 1
  }
  return locked
}

/** The longest time from the end of the warm-up to the measured request (the caches it fills last a few seconds). */
const WARM_FOR_MS = 2_000

/**
 * Runs `fn` (one request, or several at once) and answers what it cost the database. `warm` runs first, just
 * before the rows' versions are read (so what it locks is not counted): a request that fills the caches a busy
 * process keeps warm. Those last a few seconds (a program's capabilities, 5 s), and on a loaded machine reading every
 * row's version can take longer: the warm-up runs again when more than `WARM_FOR_MS` went by.
 */
export async function measure(
  db: Db,
  fn: () => Promise<unknown>,
  warm?: () => Promise<unknown>,
): Promise<Cost> {
  await settled()
  let before: RowVersions
  for (let attempt = 1; ; attempt++) {
    await warm?.()
    const warmed = performance.now()
    await settled()
    before = await rowVersions(db)
    if (!warm || performance.now() - warmed < WARM_FOR_MS || attempt === 5) break
  }
  const sent: Sent[] = []
  recording = sent
  try {
    await fn()
    await settled()
  } finally {
    recording = null
  }
  const rowsLocked = lockedBetween(before, await rowVersions(db))
  const statements = sent.filter((s) => !TRANSACTION_CONTROL.test(s.sql)).length
  return { sent, roundTrips: sent.length, statements, rowsLocked }
}

/** The statements, one a line, as a failing budget names them. */
export function describe(cost: Cost): string {
  const lines = cost.sent.map(
    (s, i) => `  ${i + 1}. [${s.connection}] ${s.sql.replace(/\s+/g, ' ').trim().slice(0, 160)}`,
  )
  return [
    `${cost.roundTrips} round trips, ${cost.statements} statements, rows locked ${JSON.stringify(cost.rowsLocked)}:`,
    ...lines,
  ].join('\n')
}

/** A hot path's budget: the most round trips, statements and rows locked it may cost. */
export interface Budget {
  roundTrips: number
  statements: number
  rowsLocked: number
}

/** Fails, naming every statement sent, when `cost` is over `budget`. */
export function assertWithin(what: string, cost: Cost, budget: Budget): void {
  const over = [
    cost.roundTrips > budget.roundTrips &&
      `${cost.roundTrips} round trips (budget ${budget.roundTrips})`,
    cost.statements > budget.statements &&
      `${cost.statements} statements (budget ${budget.statements})`,
    totalRows(cost.rowsLocked) > budget.rowsLocked &&
      `${totalRows(cost.rowsLocked)} rows locked (budget ${budget.rowsLocked})`,
  ].filter(Boolean)
  if (over.length > 0)
    throw new Error(`${what} is over its budget: ${over.join(', ')}.\n${describe(cost)}`)
}
