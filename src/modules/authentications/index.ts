/** What the authentications module publishes to other modules (the console): they import it only through this file. */
export {
  answerAuthentication,
  listAuthentications,
  retrieveAuthentication,
  simulateAuthentication,
} from './service.js'
export type { AuthenticationListFilter } from './service.js'
export type { AuthenticationView } from './schemas.js'
