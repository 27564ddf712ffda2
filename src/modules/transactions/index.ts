/** What the transactions module publishes to other modules: they import it only through this file. */
export { DISPUTED_TOTAL } from './hooks.js'
export { MAX_AMOUNT, Merchant, MerchantInput, Transaction } from './schemas.js'
export {
  presentTransaction,
  recordCapture,
  requireTransaction,
  requireTransactionOnClock,
  transactionsCreatedIn,
} from './service.js'
export type { TransactionRow, TransactionView } from './service.js'
export type { MerchantValue } from './types.js'
// The console's transaction pages and sandbox tools call the same use cases as /v1.
export {
  RefundRequest,
  SimulateRefund,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
} from './schemas.js'
export { listTransactions, retrieveTransaction, settleTransaction } from './service.js'
export { merchantRefund, refundTransaction } from './refunds.js'
// Captures (authorizations) and refunds price a foreign transaction the same way (docs/fx.md, "Transactions").
export {
  convertedAt,
  namedCurrency,
  programPricing,
  proportion,
  quoteNow,
  sameCurrency,
  shareOfAuthorization,
  wrongCurrency,
} from './fx.js'
export type { FxPricing, TransactionMoney } from './fx.js'
export { transactionsWithIdPrefix } from './search.js'
