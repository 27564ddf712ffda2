import type { ConsolePage } from '../router.js'
import { accountPages } from './account.js'
import { apiClientPages } from './api-clients.js'
import { accountObjectPages } from './accounts.js'
import { authorizationRulePages } from './authorization-rules.js'
import { authorizationPages } from './authorizations.js'
import { cardholderPages } from './cardholders.js'
import { cardPages } from './cards.js'
import { disputePages } from './disputes.js'
import { transactionPages } from './transactions.js'
import { auditPage } from './audit.js'
import { authenticationPages } from './authentications.js'
import { esimOrderPages } from './esim-orders.js'
import { esimPages } from './esims.js'
import { eventsPages } from './events.js'
import { homePage } from './home.js'
import { invitationPages } from './invitation.js'
import { networkTokenPages } from './network-tokens.js'
import { operatorClientPages } from './operator-clients.js'
import { operatorEsimPages } from './operator-esim.js'
import { operatorHealthPage } from './operator-health.js'
import { operatorNetworkPolicyPages } from './operator-network-policies.js'
import { operatorOrganizationPages } from './operator-organizations.js'
import { operatorProgramPages } from './operator-programs.js'
import { programPages } from './programs.js'
import { reportPages } from './reports.js'
import { sandboxClockPages } from './sandbox-clocks.js'
import { processorFaultPages } from './sandbox-faults.js'
import { searchPages } from './search.js'
import { signInPages } from './sign-in.js'
import { teamPages } from './team.js'
import { webhooksPages } from './webhooks.js'

/**
 * Every console page, registered in this order. A new page is a `ConsolePage` in a file of this folder, added
 * here; a planned page it replaces (nav.ts) stops being a placeholder by itself.
 */
export const CONSOLE_PAGES: readonly ConsolePage[] = [
  signInPages,
  invitationPages,
  homePage,
  programPages,
  accountPages,
  teamPages,
  cardholderPages,
  accountObjectPages,
  cardPages,
  authorizationPages,
  authorizationRulePages,
  transactionPages,
  disputePages,
  auditPage,
  apiClientPages,
  webhooksPages,
  eventsPages,
  operatorOrganizationPages,
  operatorProgramPages,
  operatorClientPages,
  operatorNetworkPolicyPages,
  operatorEsimPages,
  operatorHealthPage,
  networkTokenPages,
  authenticationPages,
  esimOrderPages,
  esimPages,
  reportPages,
  searchPages,
  processorFaultPages,
  sandboxClockPages,
]
