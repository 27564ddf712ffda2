/** What the accounts module publishes to other modules: they import it only through this file. */
export { availableBalance, availableBalanceSql } from './balance.js'
export { accountCapability } from './capability.js'
export { accountJson } from './present.js'
export { Account, AccountParams } from './schemas.js'
export { presentAccount, requireAccount } from './service.js'
export type { AccountRow, AccountView } from './service.js'
