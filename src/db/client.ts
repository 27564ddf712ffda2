import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { PostgresDialect } from 'kysely'
import type pg from 'pg'
import { pgliteDialect } from './pglite-dialect.js'
import type { Db } from './types.js'
import { openRootHandle } from './unit-of-work.js'

/** Longest wait for a pooled connection. */
const POOL_WAIT_MS = 10_000

const MAX_NAMED_PER_CONNECTION = 2000
const MAX_REMEMBERED_NAMES = 5000

/** Statement names by SQL text, shared by every connection: hashing a long text on every query cost more than the lookup. */
const namesByText = new Map<string, string>()

function statementName(text: string): string {
  let name = namesByText.get(text)
  if (name === undefined) {
    name = `s${createHash('sha1').update(text).digest('hex').slice(0, 24)}`
    if (namesByText.size >= MAX_REMEMBERED_NAMES) namesByText.clear()
    namesByText.set(text, name)
  }
  return name
}

/**
 * Marks a statement whose good plan depends on its parameters' values, where no written-in value can say so (a
 * time that decides how few rows match): it is sent unnamed, so PostgreSQL plans it for each call's values, never
 * with the generic plan a named statement may settle on. Append it with `modifyEnd(sql.raw(PLAN_PER_CALL))`.
 */
export const PLAN_PER_CALL = '/* planned per call */'

/**
 * Sends every parameterised query as a named (prepared) statement, so PostgreSQL parses and plans each
 * query shape once per connection instead of on every call; planning was half of the database's time per
 * ledger write. Names are a hash of the text, so equal text shares one statement; a connection stops naming
 * new shapes past a bound, so dynamic SQL cannot grow the server's statement cache without limit.
 */
function prepareStatementsByName(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown
  const named = new Set<string>()
  ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (
    text: unknown,
    values?: unknown,
    callback?: unknown,
  ) => {
    if (
      typeof text === 'string' &&
      Array.isArray(values) &&
      values.length > 0 &&
      !text.includes(PLAN_PER_CALL)
    ) {
      const name = statementName(text)
      if (named.has(name) || named.size < MAX_NAMED_PER_CONNECTION) {
        named.add(name)
        return query({ name, text, values }, callback)
      }
    }
    return query(text, values, callback)
  }
}

export interface DbHandle {
  db: Db
  kind: 'postgres' | 'pglite'
  close(): Promise<void>
  /** Embedded database only: a dump of the whole cluster, which `pgliteImage` opens again. */
  dump?: (compression?: 'none' | 'gzip') => Promise<Blob>
}

export interface DbOptions {
  databaseUrl: string | null
  /** Folder of the embedded database; `null` keeps it in memory (tests). */
  dataDir: string | null
  poolSize?: number
  /** An in-memory embedded database starts from this dump (`dumpDataDir`) instead of an empty cluster. */
  pgliteImage?: Blob
}

/**
 * A new embedded database on disk starts from the cluster the build made with every migration applied
 * (scripts/build.mjs writes it beside this module's built file, dist/db/): initialising a cluster and applying the
 * migrations were most of a first `npm start`. Run from the sources there is none; the migrations run as always.
 */
const MIGRATED_CLUSTER = new URL('./migrated-cluster.tar.gz', import.meta.url)

/**
 * PostgreSQL's default 128 MB of shared buffers are zeroed at every start of the embedded database, about a tenth
 * of `npm start`'s CPU; 32 MB hold what a development database works on, and the operating system caches its files.
 */
const ON_DISK_SETTINGS = ['-c', 'shared_buffers=32MB']

function newClusterImage(dataDir: string): Blob | undefined {
  if (existsSync(join(dataDir, 'PG_VERSION'))) return undefined
  try {
    return new Blob([readFileSync(MIGRATED_CLUSTER)])
  } catch {
    return undefined
  }
}

/** Opens PostgreSQL when a URL is given, otherwise the embedded PGlite database. */
export async function openDatabase(options: DbOptions): Promise<DbHandle> {
  if (options.databaseUrl) {
    // Loaded here, not with this module: the embedded database's start has no use for it.
    const { default: pg } = await import('pg')
    // int8 as JS numbers: amounts are bounded (≤ 10^12) far below 2^53; numeric stays text.
    pg.types.setTypeParser(20, (v) => Number(v))
    // A request waits at most 10 s for a connection: past that it answers 500 (and rolls back) instead of
    // stalling, should every connection be held by requests that each wait for a second one.
    const pool = new pg.Pool({
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 20,
      connectionTimeoutMillis: POOL_WAIT_MS,
    })
    pool.on('error', () => {
      /* idle client errors surface on the next query */
    })
    pool.on('connect', prepareStatementsByName)
    const db = openRootHandle(new PostgresDialect({ pool }), false)
    return { db, kind: 'postgres', close: () => db.destroy() }
  }
  const { PGlite } = await import('@electric-sql/pglite')
  let pglite
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true })
    const image = newClusterImage(options.dataDir)
    const startParams = [...PGlite.defaultStartParams, ...ON_DISK_SETTINGS]
    pglite = new PGlite(options.dataDir, { startParams, ...(image ? { loadDataDir: image } : {}) })
  } else {
    pglite = options.pgliteImage ? new PGlite({ loadDataDir: options.pgliteImage }) : new PGlite()
  }
  await pglite.waitReady
  const db = openRootHandle(pgliteDialect(pglite), true)
  const dump = (compression: 'none' | 'gzip' = 'none') => pglite.dumpDataDir(compression)
  return { db, kind: 'pglite', close: () => db.destroy(), dump }
}
