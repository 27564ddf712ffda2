import { purgeSchedule } from '../../jobs/retention.js'
import type { ServiceModule } from '../module.js'
import { USERS_PURGE_EVERY_MS, USERS_PURGE_SCHEDULE, USERS_PURGES } from './purge.js'

/**
 * The people of the management console: members and operators, invitations, sessions, TOTP, the audit log.
 * No routes of its own: the console module serves the pages, the operator module the invitation API.
 */
export const usersModule: ServiceModule = {
  name: 'users',
  purges: USERS_PURGES,
  schedules: [purgeSchedule(USERS_PURGE_SCHEDULE, USERS_PURGE_EVERY_MS, USERS_PURGES)],
}
