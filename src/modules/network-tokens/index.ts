/** What the network-tokens module publishes to other modules: they import it only through this file. */
export { tokenStatusForCard } from './service.js'
export { requireActiveCard, requireSimulatorFeed } from './simulator-feeds.js'
