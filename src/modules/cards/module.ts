import type { Purge } from '../../jobs/registry.js'
import { purgeSchedule } from '../../jobs/retention.js'
import { CARD_SCOPE } from '../../http/ownership.js'
import { answer } from '../../lib/slots.js'
import { ACCOUNT_CARDS } from '../accounts/index.js'
import { CARDHOLDER_CARDS } from '../cardholders/index.js'
import type { ServiceModule } from '../module.js'
import { CARD_EXPIRE_JOB, runExpireJob } from './expiry.js'
import { runIssueJob } from './issuance.js'
import { purgeExpiredPinKeys } from './pin.js'
import { findCard } from './repo.js'
import { purgeExpiredRevealSessions } from './reveal-sessions.js'
import { registerCards } from './routes.js'
import { CARD_ISSUE_JOB, listCards } from './service.js'
import { DELETE_CARDS_OF } from '../clocks/index.js'
import { deleteCardsOf } from './clock-deletion.js'

/** How often PIN keys and reveal sessions a day past their expiry are removed. */
const PURGE_EVERY_MS = 10 * 60 * 1000

/** PIN keys a day past their 5-minute lifetime; hosted card details sessions a day past theirs. */
const CARDS_PURGES: readonly Purge[] = [
  { name: 'card_pin_keys', run: purgeExpiredPinKeys },
  { name: 'card_reveal_sessions', run: purgeExpiredRevealSessions },
]

/** Cards: issuance (`card.issue`), expiry (`card.expire`), the card lists of cardholders and accounts, and the list filters' lookup of a card_id. */
export const cardsModule: ServiceModule = {
  name: 'cards',
  routes: registerCards,
  jobs: { [CARD_ISSUE_JOB]: runIssueJob, [CARD_EXPIRE_JOB]: runExpireJob },
  purges: CARDS_PURGES,
  schedules: [purgeSchedule('cards.purge_pin_keys', PURGE_EVERY_MS, CARDS_PURGES)],
  hooks: [
    answer(DELETE_CARDS_OF, deleteCardsOf),
    answer(CARDHOLDER_CARDS, (deps, ctx, cardholder, page) =>
      listCards(
        deps,
        ctx,
        `/v1/cardholders/${cardholder.id}/cards`,
        { cardholder_id: cardholder.id },
        page,
      ),
    ),
    answer(ACCOUNT_CARDS, (deps, ctx, account, page) =>
      listCards(deps, ctx, `/v1/accounts/${account.id}/cards`, { account_id: account.id }, page),
    ),
    answer(CARD_SCOPE, findCard),
  ],
}
