/** What the ledger module publishes to other modules: they import it only through this file. */
export { accountsCte, applySettledMovement, captureHold, entriesCreatedIn, holdsCtes, incrementHold, lockAccountRow, releaseHold } from './service.js'
export type { EntryView } from './service.js'
