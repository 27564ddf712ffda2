import { iso } from '../../http/ownership.js'
import type { AuthenticationRow } from './repo.js'
import type { AuthenticationView } from './schemas.js'

/** The REST shape of a 3-D Secure authentication. */
export function presentAuthentication(row: AuthenticationRow): AuthenticationView {
  return {
    id: row.id,
    object: 'authentication',
    card_id: row.card_id,
    amount: Number(row.amount),
    currency: row.currency,
    merchant: row.merchant,
    challenge_method: 'out_of_band',
    status: row.status as AuthenticationView['status'],
    expires_at: iso(row.expires_at)!,
    decided_at: iso(row.decided_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}
