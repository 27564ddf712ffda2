/** What the accounts module publishes to other modules: they import it only through this file. */
export { availableBalance, availableBalanceSql } from './balance.js'
export { accountCapability } from './capability.js'
export { ACCOUNT_CARDS } from './cards-hook.js'
export { accountJson } from './present.js'
export { Account, AccountParams } from './schemas.js'
export { presentAccount, requireAccount } from './service.js'
export type { AccountRow, AccountView } from './service.js'
// The console's account pages call the same use cases as /v1.
export { AccountBlockRequest, AccountCreateRequest, BLOCK_REASONS } from './schemas.js'
export {
  accountProgramOf,
  createAccount,
  listAccountCards,
  listAccounts,
  retrieveAccount,
  setAccountStatus,
} from './service.js'
export { type CurrencyHoldings, holdingsByCurrency } from './holdings.js'
export { accountsWithIdPrefix } from './search.js'
export { accountIdsOfCardholders } from './clock-deletion.js'
