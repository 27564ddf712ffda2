import type { Purge } from '../../jobs/registry.js'
import { purgeSchedule } from '../../jobs/retention.js'
import { AUTHORIZATION_SCOPE } from '../../http/ownership.js'
import { answer } from '../../lib/slots.js'
import { STORED_AUTHORIZATIONS } from '../authorization-rules/index.js'
import type { ServiceModule } from '../module.js'
import { DECISIONS } from './batcher.js'
import { ATTEMPT_PURGE_EVERY_MS, purgeExpiredAttempts } from './endpoint-service.js'
import { INTEGRATOR_CACHES } from './integrator.js'
import { HOLD_EXPIRY_ON_CLOCK, DELETE_AUTHORIZATIONS_OF } from '../clocks/index.js'
import { EXPIRY_SWEEP_MS, expireDue, holdExpiryOnClock } from './expiry.js'
import { findAuthorization } from './repo.js'
import { authorizationsToReplay } from './replay-reader.js'
import { registerAuthorizations } from './routes.js'
import { deleteAuthorizationsOf } from './clock-deletion.js'

/** Calls to the integrator's authorization endpoint, kept 30 days like events. */
const AUTHORIZATIONS_PURGES: readonly Purge[] = [
  { name: 'authorization_endpoint_attempts', run: purgeExpiredAttempts },
]

/** Real-time authorizations, their simulator and the integrator's authorization endpoint; pending ones past their expiry are swept, endpoint attempts past 30 days purged. Answers the list filters' lookup of an authorization_id. */
export const authorizationsModule: ServiceModule = {
  name: 'authorizations',
  routes: registerAuthorizations,
  purges: AUTHORIZATIONS_PURGES,
  schedules: [
    {
      type: 'authorizations.expire',
      everyMs: EXPIRY_SWEEP_MS,
      run: async (deps) => {
        await expireDue(deps)
      },
    },
    purgeSchedule(
      'authorizations.purge_endpoint_attempts',
      ATTEMPT_PURGE_EVERY_MS,
      AUTHORIZATIONS_PURGES,
    ),
  ],
  hooks: [
    answer(DELETE_AUTHORIZATIONS_OF, deleteAuthorizationsOf),
    answer(AUTHORIZATION_SCOPE, findAuthorization),
    answer(STORED_AUTHORIZATIONS, authorizationsToReplay),
    answer(HOLD_EXPIRY_ON_CLOCK, holdExpiryOnClock),
  ],
  states: [DECISIONS, INTEGRATOR_CACHES],
}
