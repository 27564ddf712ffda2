import type { ServiceModule } from '../module.js'
import { PROVISION_JOB, runProvisionJob } from './provision.js'
import { findAccount } from './repo.js'
import { registerAccounts } from './routes.js'
import { cardholderAddressNeedsKyc } from './service.js'

/** Accounts (with the processor-fault simulator); answers cardholders' address-change rule and the list filters' lookup of an account_id. */
export const accountsModule: ServiceModule = {
  name: 'accounts',
  routes: registerAccounts,
  jobs: { [PROVISION_JOB]: runProvisionJob },
  hooks: { addressChangeGuard: (deps, cardholder) => cardholderAddressNeedsKyc(deps, cardholder), accountScope: findAccount },
}
