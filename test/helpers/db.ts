import { createHash, randomBytes } from 'node:crypto'
import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import { openDatabase } from '../../src/db/client.js'
import { migratedClusterDump } from '../../src/db/migrated-cluster.js'
import { migrateToLatest } from '../../src/db/migrate.js'

/**
 * Every test file boots the app on a database of its own. Initialising a cluster and applying every migration
 * costs seconds each time, so the migrated schema is made once per set of migrations and copied: on PGlite a
 * dump of the migrated cluster (kept in the temporary folder, loaded in about half a second), on PostgreSQL a
 * template database (`CREATE DATABASE … TEMPLATE`, a file copy). The key is a hash of the migration files and
 * of the PGlite version, so a changed or added migration makes a new one; the app still runs its migrations at
 * start (none pending), exactly as on a fresh deployment.
 */
const MIGRATIONS_DIR = fileURLToPath(new URL('../../src/db/migrations/', import.meta.url))

function schemaKey(): string {
  const hash = createHash('sha256')
  const pglite = JSON.parse(
    readFileSync(
      fileURLToPath(
        new URL('../../node_modules/@electric-sql/pglite/package.json', import.meta.url),
      ),
      'utf8',
    ),
  ) as { version: string }
  hash.update(pglite.version)
  // Every file below the folder: the migrations and the data they import.
  for (const file of readdirSync(MIGRATIONS_DIR, { recursive: true }).map(String).sort()) {
    if (file.endsWith('.ts')) hash.update(file).update(readFileSync(join(MIGRATIONS_DIR, file)))
  }
  return hash.digest('hex').slice(0, 16)
}

let image: Promise<Blob> | undefined

/** A dump of an embedded database with every migration applied, made once and shared by the test files. */
export function migratedPgliteImage(): Promise<Blob> {
  image ??= (async () => {
    const path = join(tmpdir(), `svc-test-pglite-${schemaKey()}.tar`)
    try {
      return new Blob([readFileSync(path)])
    } catch {
      /* not made yet */
    }
    const dump = await migratedClusterDump()
    // Written aside and renamed: a test file running alongside reads either nothing or the whole dump.
    const partial = `${path}.${process.pid}.partial`
    writeFileSync(partial, Buffer.from(await dump.arrayBuffer()))
    renameSync(partial, path)
    return dump
  })()
  return image
}

async function adminQuery<T extends pg.QueryResultRow>(
  base: string,
  text: string,
): Promise<pg.QueryResult<T>> {
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  try {
    return await admin.query<T>(text)
  } finally {
    await admin.end()
  }
}

let template: Promise<string> | undefined

/** The name of a PostgreSQL template database with every migration applied, made by the first file that asks. */
function migratedTemplate(base: string): Promise<string> {
  template ??= (async () => {
    const name = `svc_tpl_${schemaKey()}`
    const admin = new pg.Client({ connectionString: base })
    await admin.connect()
    try {
      // One builder at a time across the test processes; the others wait, then find it made.
      await admin.query('SELECT pg_advisory_lock(7202611)')
      const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])
      if (found.rowCount === 0) {
        const building = `svc_tplb_${randomBytes(6).toString('hex')}`
        await admin.query(`CREATE DATABASE ${building}`)
        const url = new URL(base)
        url.pathname = `/${building}`
        const handle = await openDatabase({
          databaseUrl: url.toString(),
          dataDir: null,
          poolSize: 1,
        })
        await migrateToLatest(handle.db)
        await handle.close()
        // Templates of other migration sets are left alone: another checkout's suite may be copying one right now.
        await admin.query(`ALTER DATABASE ${building} RENAME TO ${name}`)
      }
      await admin.query('SELECT pg_advisory_unlock(7202611)')
    } finally {
      await admin.end()
    }
    return name
  })()
  return template
}

/**
 * A database of its own for one test file: PGlite in memory by default; with DATABASE_URL, a fresh
 * PostgreSQL database created beside it (test files run in parallel) and dropped afterwards.
 */
export async function freshDatabaseUrl(): Promise<{
  url: string | null
  drop: () => Promise<void>
}> {
  const base = process.env.DATABASE_URL
  if (!base) return { url: null, drop: async () => {} }
  const name = `svc_t_${randomBytes(6).toString('hex')}`
  await adminQuery(base, `CREATE DATABASE ${name} TEMPLATE ${await migratedTemplate(base)}`)
  const url = new URL(base)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      await adminQuery(base, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    },
  }
}
