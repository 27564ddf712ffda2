import { CARDHOLDER_SCOPE } from '../../http/ownership.js'
import { answer } from '../../lib/slots.js'
import type { ServiceModule } from '../module.js'
import { findCardholder } from './repo.js'
import { registerCardholders } from './routes.js'

/** Cardholders; answers the list filters' lookup of a cardholder_id. */
export const cardholdersModule: ServiceModule = {
  name: 'cardholders',
  routes: registerCardholders,
  hooks: [answer(CARDHOLDER_SCOPE, findCardholder)],
}
