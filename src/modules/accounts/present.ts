import type { Static } from 'typebox'
import { iso } from '../../http/ownership.js'
import type { AccountRow } from './repo.js'
import type { Account } from './schemas.js'

export type AccountView = Static<typeof Account>

/** The REST shape of an account: available is always ledger − held, computed here and nowhere else. */
export function presentAccount(row: AccountRow): AccountView {
  const ledger = Number(row.ledger_balance)
  const held = Number(row.held_balance)
  return {
    id: row.id,
    object: 'account',
    program_id: row.program_id,
    cardholder_id: row.cardholder_id,
    currency: row.currency,
    status: row.status as AccountView['status'],
    ledger_balance: ledger,
    held_balance: held,
    available_balance: ledger - held,
    has_upstream_reference: row.upstream_reference !== null,
    metadata: (row.metadata ?? {}) as Record<string, string>,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}
