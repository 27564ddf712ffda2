import { purgeIdempotencyKeys } from '../http/idempotency.js'
import { purgeDeadJobs } from './dead-jobs.js'
import type { JobSource, Purge } from './registry.js'
import { purgeSchedule } from './retention.js'

/** How often housekeeping runs (on one worker at a time, through the job runner). */
export const HOUSEKEEPING_EVERY_MS = 60_000

/**
 * The platform's own retention rules: idempotency keys past their 24-hour replay window, dead jobs 30 days after
 * they were given up. Modules purge their own tables on schedules of their own (docs/retention.md).
 */
export const PLATFORM_PURGES: readonly Purge[] = [
  { name: 'idempotency_keys', run: purgeIdempotencyKeys },
  { name: 'jobs.dead', run: purgeDeadJobs },
]

/** The platform's own recurring work, listed first in `MODULES` beside the modules' jobs. */
export const platform: JobSource = {
  name: 'platform',
  purges: PLATFORM_PURGES,
  schedules: [purgeSchedule('housekeeping', HOUSEKEEPING_EVERY_MS, PLATFORM_PURGES)],
}
