import { ACCOUNT_SCOPE } from '../../http/ownership.js'
import { answer } from '../../lib/slots.js'
import { ADDRESS_CHANGE_GUARD } from '../cardholders/index.js'
import type { ServiceModule } from '../module.js'
import { PROVISION_JOB, runProvisionJob } from './provision.js'
import { findAccount } from './repo.js'
import { registerAccounts } from './routes.js'
import { ACCOUNT_MOUNTS, cardholderAddressNeedsKyc } from './service.js'
import { DELETE_ACCOUNTS_OF } from '../clocks/index.js'
import { deleteAccountsOf } from './clock-deletion.js'

/** Accounts (with the processor-fault simulator); answers cardholders' address-change rule and the list filters' lookup of an account_id. */
export const accountsModule: ServiceModule = {
  name: 'accounts',
  routes: registerAccounts,
  jobs: { [PROVISION_JOB]: runProvisionJob },
  hooks: [
    answer(DELETE_ACCOUNTS_OF, deleteAccountsOf),
    answer(ADDRESS_CHANGE_GUARD, cardholderAddressNeedsKyc),
    answer(ACCOUNT_SCOPE, findAccount),
  ],
  states: [ACCOUNT_MOUNTS],
}
