import type { AppDeps } from '../app-deps.js'
import type { PurgeOptions } from '../db/purge.js'
import type { Purge, Schedule } from './registry.js'
import type { ScheduleType } from './types.js'

/** Rows removed by each purge of one run, by purge name. */
export type PurgeReport = Record<string, number>

/** Runs purges one after the other (never two statements of them at once); a purge that fails stops the run. */
export async function runPurges(
  deps: AppDeps,
  purges: readonly Purge[],
  options?: PurgeOptions,
): Promise<PurgeReport> {
  const report: PurgeReport = {}
  for (const purge of purges) report[purge.name] = await purge.run(deps, options)
  return report
}

/**
 * The recurring job that applies a module's retention rules: each purge in turn, every `everyMs`. A failing purge
 * is logged and the next one still runs (its rows simply wait for the next run).
 */
export function purgeSchedule(
  type: ScheduleType,
  everyMs: number,
  purges: readonly Purge[],
): Schedule {
  return {
    type,
    everyMs,
    async run(deps) {
      for (const purge of purges) {
        try {
          const removed = await purge.run(deps)
          if (removed > 0)
            deps.log.info({ purge: purge.name, removed }, 'rows past retention purged')
        } catch (err) {
          deps.log.error({ err, purge: purge.name }, 'purge failed')
        }
      }
    },
  }
}
