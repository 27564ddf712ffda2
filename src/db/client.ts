import { mkdirSync } from 'node:fs'
import { Kysely, PGliteDialect, PostgresDialect } from 'kysely'
import pg from 'pg'
import type { Database, Db } from './types.js'

// int8 as JS numbers: amounts are bounded (≤ 10^12) far below 2^53; numeric stays text.
pg.types.setTypeParser(20, (v) => Number(v))

export interface DbHandle {
  db: Db
  kind: 'postgres' | 'pglite'
  close(): Promise<void>
}

export interface DbOptions {
  databaseUrl: string | null
  /** Folder of the embedded database; `null` keeps it in memory (tests). */
  dataDir: string | null
  poolSize?: number
}

/** Opens PostgreSQL when a URL is given, otherwise the embedded PGlite database. */
export async function openDatabase(options: DbOptions): Promise<DbHandle> {
  if (options.databaseUrl) {
    const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.poolSize ?? 20 })
    pool.on('error', () => { /* idle client errors surface on the next query */ })
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) })
    return { db, kind: 'postgres', close: () => db.destroy() }
  }
  const { PGlite } = await import('@electric-sql/pglite')
  let pglite
  if (options.dataDir) {
    mkdirSync(options.dataDir, { recursive: true })
    pglite = new PGlite(options.dataDir)
  } else {
    pglite = new PGlite()
  }
  await pglite.waitReady
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) })
  return { db, kind: 'pglite', close: () => db.destroy() }
}
