import type { ServiceModule } from '../module.js'
import { registerEvents } from './routes.js'
import { purgeExpiredEvents } from './service.js'

/** How often events past their 30-day retention are removed. */
const PURGE_EVERY_MS = 60_000

/** Reading events; they are written by `emit` in their cause's transaction and purged on a schedule. */
export const eventsModule: ServiceModule = {
  name: 'events',
  routes: registerEvents,
  schedules: [{
    type: 'events.purge',
    everyMs: PURGE_EVERY_MS,
    run: async (deps) => {
      const purged = await purgeExpiredEvents(deps)
      if (purged > 0) deps.log.info({ purged }, 'expired events purged')
    },
  }],
}
