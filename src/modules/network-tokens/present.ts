import { iso } from '../../http/ownership.js'
import type { TokenRow } from './repo.js'
import type { NetworkTokenView } from './schemas.js'

/** The REST shape of a network token (the token number itself never leaves the network). */
export function presentToken(row: TokenRow): NetworkTokenView {
  return {
    id: row.id,
    object: 'network_token',
    card_id: row.card_id,
    wallet: row.wallet,
    status: row.status as NetworkTokenView['status'],
    activated_at: iso(row.activated_at),
    deleted_at: iso(row.deleted_at),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}
