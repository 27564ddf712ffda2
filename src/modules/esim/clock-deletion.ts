import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { deleteInBatches } from '../clocks/index.js'

/**
 * A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the eSIMs of its cardholders with
 * their packages (bundles) and usage reports not yet applied, and the cardholders' eSIM orders. The profiles stay
 * with the network (the simulator's stock).
 */
export async function deleteEsimsOf(deps: AppDeps, cardholderIds: readonly string[]) {
  if (cardholderIds.length === 0) return 0
  const holders = [...cardholderIds]
  const ofEsims = sql`esim_id IN (SELECT id FROM esims WHERE cardholder_id = ANY(${holders}))`
  let n = await deleteInBatches(deps.db, 'esim_usage_reports', ofEsims, 'id')
  n += await deleteInBatches(deps.db, 'esim_bundles', ofEsims, 'order_id')
  n += await deleteInBatches(deps.db, 'esims', sql`cardholder_id = ANY(${holders})`, 'id')
  return (
    n + (await deleteInBatches(deps.db, 'esim_orders', sql`cardholder_id = ANY(${holders})`, 'id'))
  )
}
