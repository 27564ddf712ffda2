import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import { deleteInBatches } from '../clocks/index.js'
import './types.js'

/** The ids of the accounts of these cardholders (any organization: the caller has the cardholders already). */
export async function accountIdsOfCardholders(
  db: Db,
  cardholderIds: readonly string[],
): Promise<string[]> {
  if (cardholderIds.length === 0) return []
  const rows = await db
    .selectFrom('accounts')
    .select('id')
    .where('cardholder_id', 'in', [...cardholderIds])
    .execute()
  return rows.map((r) => r.id)
}

/**
 * A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the accounts of its cardholders (the
 * ledger has deleted their entries and holds before).
 */
export async function deleteAccountsOf(deps: AppDeps, cardholderIds: readonly string[]) {
  if (cardholderIds.length === 0) return 0
  return deleteInBatches(deps.db, 'accounts', sql`cardholder_id = ANY(${[...cardholderIds]})`, 'id')
}
