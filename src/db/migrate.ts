import { readdir } from 'node:fs/promises'
import { dirname, extname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { sql } from 'kysely'
import { Migrator, type Migration, type MigrationProvider } from 'kysely'
import type { Db } from './types.js'

const HERE = fileURLToPath(import.meta.url)
const MIGRATIONS_DIR = join(dirname(HERE), 'migrations')
/** `.ts` when the sources run (tests, tsx), `.js` in the build (dist/): the migrations are this file's siblings. */
const EXTENSION = extname(HERE)

/** Every file in `migrations/` in name order; each module owns its own numbered file. */
class FolderMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const out: Record<string, Migration> = {}
    for (const name of (await migrationNames()).sort()) {
      out[name] = (await import(
        pathToFileURL(join(MIGRATIONS_DIR, `${name}${EXTENSION}`)).href
      )) as Migration
    }
    return out
  }
}

/** Names of the migration files, without loading them. */
async function migrationNames(): Promise<string[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter(
    (f) => /^\d{4}_/.test(f) && f.endsWith(EXTENSION),
  )
  return files.map((f) => f.slice(0, -EXTENSION.length))
}

/**
 * Whether every migration file is recorded as applied (start-up and the readiness check): one read of Kysely's
 * table, without importing the migrations (on the embedded database's start-up, loading and compiling every
 * migration module cost most of a second).
 */
export async function migrationsApplied(db: Db): Promise<boolean> {
  try {
    const rows = await sql<{ name: string }>`SELECT name FROM kysely_migration`.execute(db)
    const applied = new Set(rows.rows.map((r) => r.name))
    return (await migrationNames()).every((name) => applied.has(name))
  } catch {
    return false // no migration table yet: a new database
  }
}

/** Brings the schema up to date; safe to run from several nodes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  if (await migrationsApplied(db)) return []
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider() })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** Runs DDL statements one by one (PGlite's extended protocol takes one statement per query). */
export async function runStatements(db: Db, statements: string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db)
}
