import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { deleteInBatches } from '../clocks/index.js'

/** A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the hosted-page links of its cardholders. */
export async function deleteH5LinksOf(deps: AppDeps, cardholderIds: readonly string[]) {
  if (cardholderIds.length === 0) return 0
  return deleteInBatches(
    deps.db,
    'esim_h5_links',
    sql`cardholder_id = ANY(${[...cardholderIds]})`,
    'id',
  )
}
