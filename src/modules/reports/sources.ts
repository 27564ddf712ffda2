import type { AppDeps } from '../../app-deps.js'
import type { CreatedWindow } from '../../db/created-window.js'
import { ordersCreatedIn, type OrderView } from '../esim/index.js'
import { entriesCreatedIn, type EntryView } from '../ledger/index.js'
import { transactionsCreatedIn, type TransactionView } from '../transactions/index.js'
import type { Column } from './csv.js'
import type { ReportType } from './schemas.js'

/** Where a report type reads its rows (oldest first, in keyset batches) and the CSV columns it writes. */
export interface ReportSource<T extends { id: string; created_at: string }> {
  columns: Column<T>[]
  fetch: (deps: AppDeps, window: CreatedWindow) => Promise<T[]>
}

const transactions: ReportSource<TransactionView> = {
  fetch: transactionsCreatedIn,
  columns: [
    { name: 'id', value: (r) => r.id },
    { name: 'type', value: (r) => r.type },
    { name: 'status', value: (r) => r.status },
    { name: 'amount', value: (r) => r.amount },
    { name: 'refunded_amount', value: (r) => r.refunded_amount },
    { name: 'currency', value: (r) => r.currency },
    { name: 'card_id', value: (r) => r.card_id },
    { name: 'account_id', value: (r) => r.account_id },
    { name: 'authorization_id', value: (r) => r.authorization_id },
    { name: 'original_transaction_id', value: (r) => r.original_transaction_id },
    { name: 'merchant_name', value: (r) => r.merchant.name, text: true },
    { name: 'merchant_mcc', value: (r) => r.merchant.mcc, text: true },
    { name: 'merchant_city', value: (r) => r.merchant.city, text: true },
    { name: 'merchant_country', value: (r) => r.merchant.country, text: true },
    { name: 'created_at', value: (r) => r.created_at },
    { name: 'settled_at', value: (r) => r.settled_at },
    // Added last, so the columns before keep their places: what the merchant named, and the conversion (empty
    // when the transaction needed none). fx_fee is the markup's part of the conversion, in `currency`.
    { name: 'merchant_amount', value: (r) => r.merchant_amount },
    { name: 'merchant_currency', value: (r) => r.merchant_currency },
    { name: 'fx_rate', value: (r) => r.fx?.rate ?? null },
    { name: 'fx_fee', value: (r) => r.fx?.fee_amount ?? null },
  ],
}

const ledger: ReportSource<EntryView> = {
  fetch: entriesCreatedIn,
  columns: [
    { name: 'id', value: (r) => r.id },
    { name: 'account_id', value: (r) => r.account_id },
    { name: 'type', value: (r) => r.type },
    { name: 'amount', value: (r) => r.amount },
    { name: 'currency', value: (r) => r.currency },
    { name: 'ledger_balance_after', value: (r) => r.ledger_balance_after },
    { name: 'held_balance_after', value: (r) => r.held_balance_after },
    { name: 'available_balance_after', value: (r) => r.available_balance_after },
    { name: 'source_id', value: (r) => r.source_id },
    { name: 'client_transaction_id', value: (r) => r.client_transaction_id, text: true },
    { name: 'reference', value: (r) => r.reference, text: true },
    { name: 'description', value: (r) => r.description, text: true },
    { name: 'created_at', value: (r) => r.created_at },
  ],
}

const esimOrders: ReportSource<OrderView> = {
  fetch: ordersCreatedIn,
  columns: [
    { name: 'id', value: (r) => r.id },
    { name: 'type', value: (r) => r.type },
    // manual: bought by a caller; auto: an auto top-up from stored value.
    { name: 'trigger', value: (r) => r.trigger },
    { name: 'status', value: (r) => r.status },
    { name: 'package_id', value: (r) => r.package_id },
    { name: 'top_up_id', value: (r) => r.top_up_id },
    { name: 'esim_id', value: (r) => r.esim_id },
    { name: 'cardholder_id', value: (r) => r.cardholder_id },
    { name: 'account_id', value: (r) => r.account_id },
    // Without a paying account the organization is billed (decisions.md, eSIM orders); nothing is charged unless completed.
    { name: 'billed_to', value: (r) => (r.account_id ? 'account' : 'organization') },
    { name: 'price', value: (r) => r.price },
    { name: 'currency', value: (r) => r.currency },
    // What the paying account was charged, in its currency (the price converted at order time when another).
    { name: 'charged_amount', value: (r) => r.charged_amount },
    { name: 'charged_currency', value: (r) => r.charged_currency },
    { name: 'fx_rate', value: (r) => r.fx?.rate ?? null },
    { name: 'reference', value: (r) => r.reference, text: true },
    { name: 'failure_reason', value: (r) => r.failure_reason, text: true },
    { name: 'created_at', value: (r) => r.created_at },
    { name: 'settled_at', value: (r) => r.settled_at },
  ],
}

/** Every report type's source. */
export const SOURCES: { [K in ReportType]: ReportSource<any> } = {
  transactions,
  ledger,
  esim_orders: esimOrders,
}
