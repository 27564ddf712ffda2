import type { ServiceModule } from '../module.js'
import { purgeExpiredAccess, USERS_PURGE_EVERY_MS, USERS_PURGE_SCHEDULE } from './purge.js'

/**
 * The people of the management console: members and operators, invitations, sessions, TOTP, the audit log.
 * No routes of its own: the console module serves the pages, the operator module the invitation API.
 */
export const usersModule: ServiceModule = {
  name: 'users',
  schedules: [{ type: USERS_PURGE_SCHEDULE, everyMs: USERS_PURGE_EVERY_MS, run: purgeExpiredAccess }],
}
