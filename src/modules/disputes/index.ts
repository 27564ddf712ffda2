/** What the disputes module publishes to other modules (the console): they import it only through this file. */
export { requireDispute } from './service.js'
