import type { ServiceModule } from '../module.js'
import { ADJUSTMENTS } from './batcher.js'
import { registerLedgerRoutes } from './routes.js'

/** Credits, debits and the entries of an account: the only writer of balances, holds and entries. */
export const ledgerModule: ServiceModule = {
  name: 'ledger',
  routes: registerLedgerRoutes,
  states: [ADJUSTMENTS],
}
