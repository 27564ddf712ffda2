import { iso } from '../../http/ownership.js'
import type { TransactionRow } from './repo.js'
import type { TransactionView } from './schemas.js'

/** The REST shape of a transaction (also the `data.object` of its events). */
export function presentTransaction(row: TransactionRow): TransactionView {
  return {
    id: row.id,
    object: 'transaction',
    type: row.type as TransactionView['type'],
    status: row.status as TransactionView['status'],
    amount: Number(row.amount),
    refunded_amount: Number(row.refunded_amount),
    currency: row.currency,
    merchant_amount: Number(row.merchant_amount),
    merchant_refunded_amount: Number(row.merchant_refunded_amount),
    merchant_currency: row.merchant_currency,
    fx: row.fx === null ? null : { ...row.fx, fee_amount: Number(row.fx.fee_amount) },
    authorization_id: row.authorization_id,
    original_transaction_id: row.original_transaction_id,
    card_id: row.card_id,
    account_id: row.account_id,
    program_id: row.program_id,
    merchant: {
      name: row.merchant.name,
      mcc: row.merchant.mcc ?? null,
      city: row.merchant.city ?? null,
      country: row.merchant.country ?? null,
    },
    reason: row.reason,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    settled_at: iso(row.settled_at),
  }
}
