import type { ServiceModule } from '../module.js'
import { ADJUSTMENTS } from './batcher.js'
import { registerLedgerRoutes } from './routes.js'
import { answer } from '../../lib/slots.js'
import { DELETE_LEDGER_OF } from '../clocks/index.js'
import { deleteLedgerOf } from './clock-deletion.js'

/** Credits, debits and the entries of an account: the only writer of balances, holds and entries. */
export const ledgerModule: ServiceModule = {
  name: 'ledger',
  routes: registerLedgerRoutes,
  states: [ADJUSTMENTS],
  hooks: [answer(DELETE_LEDGER_OF, deleteLedgerOf)],
}
