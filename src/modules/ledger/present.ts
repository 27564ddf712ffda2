import type { Static } from 'typebox'
import { iso } from '../../http/ownership.js'
import type { EntryRow } from './repo.js'
import type { LedgerEntry } from './schemas.js'

export type EntryView = Static<typeof LedgerEntry>

export function presentEntry(row: EntryRow): EntryView {
  return {
    id: row.id,
    object: 'ledger_entry',
    account_id: row.account_id,
    type: row.type as EntryView['type'],
    amount: Number(row.amount),
    currency: row.currency,
    ledger_balance_after: Number(row.ledger_balance_after),
    held_balance_after: Number(row.held_balance_after),
    available_balance_after: Number(row.available_balance_after),
    source_id: row.source_id,
    client_transaction_id: row.client_transaction_id,
    reference: row.reference,
    description: row.description,
    created_at: iso(row.created_at)!,
  }
}
