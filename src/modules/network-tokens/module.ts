import type { ServiceModule } from '../module.js'
import { registerNetworkTokens } from './routes.js'
import { deleteTokensOfClosedCard } from './service.js'

/** Wallet tokens of cards; a closed card's tokens are deleted with it (the `cardClosed` hook). */
export const networkTokensModule: ServiceModule = {
  name: 'network-tokens',
  routes: registerNetworkTokens,
  hooks: { cardClosed: deleteTokensOfClosedCard },
}
