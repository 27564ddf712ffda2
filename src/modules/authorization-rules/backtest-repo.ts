import type { Insertable, Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { AuthorizationRuleBacktestsTable, BacktestResultsValue } from './types.js'

export type BacktestRow = Selectable<AuthorizationRuleBacktestsTable>

export async function insertBacktest(
  db: Db,
  row: Insertable<AuthorizationRuleBacktestsTable>,
): Promise<BacktestRow> {
  return db
    .insertInto('authorization_rule_backtests')
    .values(row)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function findBacktest(db: Db, id: string): Promise<BacktestRow | undefined> {
  return db
    .selectFrom('authorization_rule_backtests')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst()
}

/** A page of a rule's backtests, newest first. */
export async function listBacktests(
  db: Db,
  ruleId: string,
  bounds: PageBounds,
): Promise<BacktestRow[]> {
  const q = db.selectFrom('authorization_rule_backtests').selectAll().where('rule_id', '=', ruleId)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Records how a pending backtest ended; undefined when it was no longer pending (another run finished it). */
export async function finishPending(
  trx: Db,
  id: string,
  outcome:
    | { status: 'completed'; results: BacktestResultsValue }
    | { status: 'failed'; failure_reason: string },
  now: Date,
): Promise<BacktestRow | undefined> {
  return trx
    .updateTable('authorization_rule_backtests')
    .set({
      status: outcome.status,
      results: outcome.status === 'completed' ? json(outcome.results) : null,
      failure_reason: outcome.status === 'failed' ? outcome.failure_reason : null,
      updated_at: now,
      completed_at: now,
    })
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .returningAll()
    .executeTakeFirst()
}
