import { readdir } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { sql } from 'kysely'
import { Migrator, type Migration, type MigrationProvider } from 'kysely'
import type { Db } from './types.js'

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations')

/** Every file in `migrations/` in name order; each module owns its own numbered file. */
class FolderMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.ts$/.test(f)).sort()
    const out: Record<string, Migration> = {}
    for (const file of files) {
      const mod = await import(pathToFileURL(join(MIGRATIONS_DIR, file)).href)
      out[file.replace(/\.ts$/, '')] = mod as Migration
    }
    return out
  }
}

/** Brings the schema up to date; safe to run from several nodes at once (Kysely takes a lock). */
export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider() })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}

/** True when every known migration has been applied (readiness check). */
export async function migrationsApplied(db: Db): Promise<boolean> {
  const migrator = new Migrator({ db, provider: new FolderMigrationProvider() })
  const all = await migrator.getMigrations()
  return all.every((m) => m.executedAt !== undefined)
}

/** Runs DDL statements one by one (PGlite's extended protocol takes one statement per query). */
export async function runStatements(db: Db, statements: string[]): Promise<void> {
  for (const statement of statements) await sql.raw(statement).execute(db)
}
