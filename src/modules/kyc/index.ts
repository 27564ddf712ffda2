/** What the kyc module publishes to other modules: they import it only through this file. */
export { assertKycForProgram } from './evidence.js'
