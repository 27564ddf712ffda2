import { TRANSACTION_SCOPE } from '../../http/ownership.js'
import { answer } from '../../lib/slots.js'
import { DELETE_TRANSACTIONS_OF, SETTLEMENT_ON_CLOCK } from '../clocks/index.js'
import type { ServiceModule } from '../module.js'
import { findTransaction } from './repo.js'
import { registerTransactions } from './routes.js'
import { SETTLEMENT_SWEEP_MS, settleDue, settlementOnClock } from './settlement.js'
import { deleteTransactionsOf } from './clock-deletion.js'

/** Captures, refunds and their settlement (T+1, swept; under a sandbox clock, by its advance); answers the list filters' lookup of a transaction_id. */
export const transactionsModule: ServiceModule = {
  name: 'transactions',
  routes: registerTransactions,
  schedules: [
    {
      type: 'transactions.settle',
      everyMs: SETTLEMENT_SWEEP_MS,
      run: async (deps) => {
        await settleDue(deps)
      },
    },
  ],
  hooks: [
    answer(DELETE_TRANSACTIONS_OF, deleteTransactionsOf),
    answer(TRANSACTION_SCOPE, findTransaction),
    answer(SETTLEMENT_ON_CLOCK, settlementOnClock),
  ],
}
