import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow } from '../../http/context.js'
import { emit } from '../events/index.js'
import { presentTransaction } from './present.js'
import type { TransactionRow } from './repo.js'

/** Captures settle this long after they were made (the network's clearing cycle, T+1). */
export const SETTLEMENT_DELAY_MS = 24 * 60 * 60 * 1000
/** How often the settlement sweep looks for captures that are due. */
export const SETTLEMENT_SWEEP_MS = 60_000
const BATCH = 500

/**
 * Settles every capture older than the settlement delay: each batch moves its rows `pending` → `settled`
 * and emits transaction.updated for each, in one transaction; rows another sweep holds are skipped.
 * Returns how many were settled.
 */
export async function settleDue(deps: AppDeps): Promise<number> {
  let total = 0
  for (;;) {
    const now = deps.clock.now()
    const before = new Date(now.getTime() - SETTLEMENT_DELAY_MS)
    const settled = await withTx(deps.db, async (trx) => {
      const { rows } = await sql<TransactionRow>`
        UPDATE transactions SET status = 'settled', settled_at = ${now}, updated_at = ${now}
        WHERE id IN (
          SELECT id FROM transactions WHERE status = 'pending' AND created_at <= ${before}
          ORDER BY created_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
        ) AND status = 'pending'
        RETURNING *`.execute(trx)
      for (const row of rows) {
        await emit(trx, scopeOfRow(row), 'transaction.updated', presentTransaction(row), now)
      }
      return rows.length
    })
    total += settled
    if (settled < BATCH) return total
  }
}
