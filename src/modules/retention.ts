import type { AppDeps } from '../app-deps.js'
import type { PurgeOptions } from '../db/purge.js'
import type { Purge } from '../jobs/registry.js'
import { runPurges, type PurgeReport } from '../jobs/retention.js'
import { MODULES } from './index.js'

/** Every retention rule of the service (the platform's and each module's), in `MODULES` order. */
export const PURGES: readonly Purge[] = MODULES.flatMap((m) => m.purges ?? [])

/**
 * Runs every purge once, one after the other, and answers the rows each removed, by name (the schedules run the
 * same purges, each module's on its own schedule). For the benchmark and operators: `options` sets the batch size
 * and the pause between statements of every purge.
 */
export function purgeAll(deps: AppDeps, options?: PurgeOptions): Promise<PurgeReport> {
  return runPurges(deps, PURGES, options)
}
