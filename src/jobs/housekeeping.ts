import type { AppDeps } from '../app-deps.js'
import { purgeIdempotencyKeys } from '../http/idempotency.js'
import type { JobSource } from './registry.js'

/** How often housekeeping runs (on one worker at a time, through the job runner). */
export const HOUSEKEEPING_EVERY_MS = 60_000

/**
 * The platform's periodic clean-up: idempotency keys past their replay window. Modules purge their own
 * tables on schedules of their own (oauth: redeemed jtis and expired tokens; events: events past 30 days).
 */
export async function runHousekeeping(deps: AppDeps): Promise<void> {
  await purgeIdempotencyKeys(deps)
}

/** The platform's own recurring work, listed first in `MODULES` beside the modules' jobs. */
export const platform: JobSource = {
  name: 'platform',
  schedules: [{ type: 'housekeeping', everyMs: HOUSEKEEPING_EVERY_MS, run: runHousekeeping }],
}
