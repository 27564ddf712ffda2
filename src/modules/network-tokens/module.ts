import { answer } from '../../lib/slots.js'
import { CARD_CLOSED } from '../cards/index.js'
import type { ServiceModule } from '../module.js'
import { registerNetworkTokens } from './routes.js'
import { deleteTokensOfClosedCard } from './service.js'
import { DELETE_NETWORK_TOKENS_OF } from '../clocks/index.js'
import { deleteNetworkTokensOf } from './clock-deletion.js'

/** Wallet tokens of cards; a closed card's tokens are deleted with it (the `CARD_CLOSED` hook). */
export const networkTokensModule: ServiceModule = {
  name: 'network-tokens',
  routes: registerNetworkTokens,
  hooks: [
    answer(DELETE_NETWORK_TOKENS_OF, deleteNetworkTokensOf),
    answer(CARD_CLOSED, deleteTokensOfClosedCard),
  ],
}
