/** What the cards module publishes to other modules: they import it only through this file. */
export { cardsCte, cardUnchangedSql } from './read-plan.js'
export { hasCard, requireCard, requireCardProgram } from './service.js'
export type { CardRow } from './service.js'
