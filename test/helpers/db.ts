import { randomBytes } from 'node:crypto'
import pg from 'pg'

/**
 * A database of its own for one test file: PGlite in memory by default; with DATABASE_URL, a fresh
 * PostgreSQL database created beside it (test files run in parallel) and dropped afterwards.
 */
export async function freshDatabaseUrl(): Promise<{ url: string | null; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL
  if (!base) return { url: null, drop: async () => {} }
  const name = `svc_t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: base })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(base)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    drop: async () => {
      const c = new pg.Client({ connectionString: base })
      await c.connect()
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await c.end()
    },
  }
}
