import type { AppDeps } from '../app-deps.js'
import { purgeIdempotencyKeys } from '../http/idempotency.js'
import { purgeExpiredEvents } from '../modules/events/service.js'
import { purgeExpiredCredentials } from '../modules/oauth/repo.js'
import type { JobSource } from './registry.js'

/** How often housekeeping runs (on one worker at a time, through the job runner). */
export const HOUSEKEEPING_EVERY_MS = 60_000

/** Periodic clean-up of what has outlived its use: redeemed jtis, expired tokens, old idempotency keys, events past 30 days. */
export async function runHousekeeping(deps: AppDeps): Promise<void> {
  const now = deps.clock.now()
  await purgeExpiredCredentials(deps.db, now)
  await purgeIdempotencyKeys(deps)
  const purged = await purgeExpiredEvents(deps)
  if (purged > 0) deps.log.info({ purged }, 'expired events purged')
}

/** The platform's own recurring work, listed first in `MODULES` beside the modules' jobs. */
export const platform: JobSource = {
  name: 'platform',
  schedules: [{ type: 'housekeeping', everyMs: HOUSEKEEPING_EVERY_MS, run: runHousekeeping }],
}
