import type { Db } from './types.js'

const RETRYABLE = new Set(['40001', '40P01'])

/**
 * The one way to run a database transaction: everything `fn` writes (rows, ledger entries, events, jobs)
 * commits or rolls back together. Serialization failures and deadlocks are retried a bounded number of times.
 */
export async function withTx<T>(db: Db, fn: (trx: Db) => Promise<T>, attempts = 5): Promise<T> {
  if (db.isTransaction) return fn(db)
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(fn)
    } catch (err) {
      const code = (err as { code?: string }).code
      if (!code || !RETRYABLE.has(code) || attempt >= attempts) throw err
      await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt))
    }
  }
}

/**
 * Work a caller adds to a service's own transaction, after the change and before the commit (the console's
 * audit row): it commits with the change or not at all. A service that changes nothing does not call it.
 */
export type InSameTx<T> = (trx: Db, result: T) => Promise<unknown>

/** True for a unique-constraint violation, optionally on a named constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; message?: string }
  if (e?.code !== '23505') return false
  if (!constraint) return true
  return e.constraint === constraint || (e.message ?? '').includes(constraint)
}
