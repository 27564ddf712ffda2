/** What the network-tokens module publishes to other modules: they import it only through this file. */
export { tokenStatusForCard } from './service.js'
export { requireActiveCard, requireSimulatorFeed } from './simulator-feeds.js'
export { listTokens, moveToken, provisionToken, retrieveToken } from './service.js'
export type { TokenListFilter } from './service.js'
export type { NetworkTokenView } from './schemas.js'
