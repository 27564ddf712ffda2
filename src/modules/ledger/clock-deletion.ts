import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { accountIdsOfCardholders } from '../accounts/index.js'
import { deleteInBatches } from '../clocks/index.js'

/**
 * A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the holds and ledger entries of its
 * cardholders' accounts (the balances go with the accounts, deleted next).
 */
export async function deleteLedgerOf(deps: AppDeps, cardholderIds: readonly string[]) {
  const accounts = await accountIdsOfCardholders(deps.db, cardholderIds)
  if (accounts.length === 0) return 0
  const holds = await deleteInBatches(deps.db, 'holds', sql`account_id = ANY(${accounts})`, 'id')
  const entries = await deleteInBatches(
    deps.db,
    'ledger_entries',
    sql`account_id = ANY(${accounts})`,
    'id',
  )
  return holds + entries
}
