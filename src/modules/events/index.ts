import type { ServiceModule } from '../module.js'
import { registerEvents } from './routes.js'

/** Reading events; they are written by `emit` in their cause's transaction and purged by housekeeping. */
export const eventsModule: ServiceModule = { name: 'events', routes: registerEvents }
