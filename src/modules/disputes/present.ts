import { iso } from '../../http/ownership.js'
import type { DisputeRow } from './repo.js'
import type { DisputeView } from './schemas.js'

/** The REST shape of a dispute (also the `data.object` of its events). */
export function presentDispute(row: DisputeRow): DisputeView {
  return {
    id: row.id,
    object: 'dispute',
    transaction_id: row.transaction_id,
    card_id: row.card_id,
    account_id: row.account_id,
    amount: Number(row.amount),
    currency: row.currency,
    reason: row.reason,
    evidence: row.evidence ?? null,
    status: row.status as DisputeView['status'],
    resolved_at: iso(row.resolved_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}
