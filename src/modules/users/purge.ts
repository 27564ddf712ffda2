import type { AppDeps } from '../../app-deps.js'
import type { ScheduleType } from '../../jobs/types.js'
import * as repo from './repo.js'
import { SECOND_FACTOR_MS, SESSION_ABSOLUTE_MS, SESSION_IDLE_MS, SIGN_IN_WINDOW_MS } from './sessions.js'

export const USERS_PURGE_SCHEDULE = 'users.purge' satisfies ScheduleType
export const USERS_PURGE_EVERY_MS = 5 * 60 * 1000

/**
 * Deletes what can no longer be used: sessions past their idle or absolute limit (or a second-factor step left
 * unfinished), expired invitations, and sign-in failures older than the rate-limit window. Expired rows are
 * refused on use anyway; this keeps the tables small.
 */
export async function purgeExpiredAccess(deps: AppDeps): Promise<void> {
  const now = deps.clock.now().getTime()
  await repo.purgeExpired(deps.db, {
    idleBefore: new Date(now - SESSION_IDLE_MS),
    createdBefore: new Date(now - SESSION_ABSOLUTE_MS),
    secondFactorBefore: new Date(now - SECOND_FACTOR_MS),
    now: new Date(now),
    failuresBefore: new Date(now - SIGN_IN_WINDOW_MS),
  })
}
