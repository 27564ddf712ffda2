import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { scopeOfRow } from '../../http/context.js'
import { cardIdsOnClock, clockOfCardSql } from '../cards/index.js'
import type { ClockSweep } from '../clocks/index.js'
import { emit } from '../events/index.js'
import { presentTransaction } from './present.js'
import * as repo from './repo.js'
import type { TransactionRow } from './repo.js'

/** Captures settle this long after they were made (the network's clearing cycle, T+1). */
export const SETTLEMENT_DELAY_MS = 24 * 60 * 60 * 1000
/** How often the settlement sweep looks for captures that are due. */
export const SETTLEMENT_SWEEP_MS = 60_000
const BATCH = 500

/**
 * Settles every capture older than the settlement delay: each batch moves its rows `pending` → `settled`
 * and emits transaction.updated for each, in one transaction; rows another sweep holds are skipped. Captures under a
 * sandbox clock are left alone: they settle when their clock is advanced past their time (`settlementOnClock`).
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
            AND ${clockOfCardSql(sql.ref('transactions.card_id'))} IS NULL
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

/**
 * Settlement under a sandbox clock (docs/sandbox-clocks.md), run by the clock's advance in time order with the other
 * sweeps: the pending captures of the clock's cards fall due `SETTLEMENT_DELAY_MS` after their `created_at` (the
 * clock's time when they were made), and one settles as the wall-time sweep settles it (a conditional update: one
 * no longer pending, or not yet due on the clock, is left alone), so an advance that runs again settles nothing twice.
 */
export const settlementOnClock: ClockSweep = {
  async due(deps, clockId, until, limit) {
    // The clock's cards, through its cardholders (their modules' reads): a sandbox clock holds a test's few.
    const cardIds = await cardIdsOnClock(deps.db, clockId)
    const rows = await repo.pendingOfCards(
      deps.db,
      cardIds,
      new Date(until.getTime() - SETTLEMENT_DELAY_MS),
      limit,
    )
    return rows.map((r) => ({
      id: r.id,
      at: new Date(new Date(r.created_at).getTime() + SETTLEMENT_DELAY_MS),
    }))
  },
  async run(deps, clockId, id) {
    const now = deps.clock.now()
    return withTx(deps.db, async (trx) => {
      const row = await repo.settlePending(
        trx,
        id,
        now,
        new Date(now.getTime() - SETTLEMENT_DELAY_MS),
      )
      if (!row) return false
      await emit(
        trx,
        { ...scopeOfRow(row), clockId },
        'transaction.updated',
        presentTransaction(row),
        now,
      )
      return true
    })
  },
}
