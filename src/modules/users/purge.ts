import type { AppDeps } from '../../app-deps.js'
import type { PurgeOptions } from '../../db/purge.js'
import type { Purge } from '../../jobs/registry.js'
import type { ScheduleType } from '../../jobs/types.js'
import * as repo from './repo.js'
import {
  SECOND_FACTOR_MS,
  SESSION_ABSOLUTE_MS,
  SESSION_IDLE_MS,
  SIGN_IN_WINDOW_MS,
} from './sessions.js'

export const USERS_PURGE_SCHEDULE = 'users.purge' satisfies ScheduleType
export const USERS_PURGE_EVERY_MS = 5 * 60 * 1000

/** Sessions past their idle (30 min) or absolute (12 h) limit, or a second-factor step left unfinished (5 min). */
export function purgeExpiredSessions(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  const now = deps.clock.now().getTime()
  return repo.purgeSessions(
    deps.db,
    {
      idleBefore: new Date(now - SESSION_IDLE_MS),
      createdBefore: new Date(now - SESSION_ABSOLUTE_MS),
      secondFactorBefore: new Date(now - SECOND_FACTOR_MS),
    },
    options,
  )
}

/** Invitation links once expired (an expired link and an unknown one answer the same page). */
export function purgeExpiredInvitations(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgeInvitationsExpiredBefore(deps.db, deps.clock.now(), options)
}

/** Sign-in failures older than the rate-limit window, which is all they count for. */
export function purgeOldSignInFailures(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgeFailuresBefore(
    deps.db,
    new Date(deps.clock.now().getTime() - SIGN_IN_WINDOW_MS),
    options,
  )
}

/**
 * What can no longer be used: expired rows are refused on use anyway; these keep the tables small.
 */
export const USERS_PURGES: readonly Purge[] = [
  { name: 'console_sessions', run: purgeExpiredSessions },
  { name: 'user_invitations', run: purgeExpiredInvitations },
  { name: 'console_sign_in_failures', run: purgeOldSignInFailures },
]
