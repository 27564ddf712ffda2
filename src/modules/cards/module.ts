import type { ServiceModule } from '../module.js'
import { CARD_EXPIRE_JOB, runExpireJob } from './expiry.js'
import { runIssueJob } from './issuance.js'
import { findCard } from './repo.js'
import { registerCards } from './routes.js'
import { CARD_ISSUE_JOB, listCards } from './service.js'

/** Cards: issuance (`card.issue`), expiry (`card.expire`), the card lists of cardholders and accounts, and the list filters' lookup of a card_id. */
export const cardsModule: ServiceModule = {
  name: 'cards',
  routes: registerCards,
  jobs: { [CARD_ISSUE_JOB]: runIssueJob, [CARD_EXPIRE_JOB]: runExpireJob },
  hooks: {
    cardholderCards: (deps, ctx, cardholder, page) =>
      listCards(deps, ctx, `/v1/cardholders/${cardholder.id}/cards`, { cardholder_id: cardholder.id }, page),
    accountCards: (deps, ctx, account, page) =>
      listCards(deps, ctx, `/v1/accounts/${account.id}/cards`, { account_id: account.id }, page),
    cardScope: findCard,
  },
}
