import type { Purge } from '../../jobs/registry.js'
import { purgeSchedule } from '../../jobs/retention.js'
import type { ServiceModule } from '../module.js'
import { registerEvents } from './routes.js'
import { purgeExpiredEvents } from './service.js'

/** How often events past their 30-day retention are removed. */
const PURGE_EVERY_MS = 60_000

/** Events past 30 days, with their webhook deliveries and delivery attempts. */
const EVENTS_PURGES: readonly Purge[] = [{ name: 'events', run: purgeExpiredEvents }]

/** Reading events; they are written by `emit` in their cause's transaction and purged on a schedule. */
export const eventsModule: ServiceModule = {
  name: 'events',
  routes: registerEvents,
  purges: EVENTS_PURGES,
  schedules: [purgeSchedule('events.purge', PURGE_EVERY_MS, EVENTS_PURGES)],
}
