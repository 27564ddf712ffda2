import type { AppDeps } from '../app-deps.js'
import type { PurgeOptions } from '../db/purge.js'
import type { JobHandler } from './queue.js'
import type { JobType, ScheduleType } from './types.js'

/** Recurring work (purges, sweeps): a job that reschedules itself `everyMs` after each run. */
export interface Schedule {
  type: ScheduleType
  everyMs: number
  run(deps: AppDeps): Promise<void>
}

/**
 * One retention rule: removes the rows of one table that have outlived their retention, in short batches
 * (`purgeInBatches`), and answers how many went. A module lists its purges (`purges`) and runs them on a
 * schedule of its own (`purgeSchedule`); `purgeAll` (modules/retention.ts) runs every one of them once.
 */
export interface Purge {
  /** What it removes, as reports and logs name it (`events`, `jobs.dead`, `esim_h5_links`). */
  name: string
  run(deps: AppDeps, options?: PurgeOptions): Promise<number>
}

/** What a module (or the platform) gives the worker: handlers by job type, and its recurring work. */
export interface JobSource {
  name: string
  jobs?: Partial<Record<JobType, JobHandler>>
  schedules?: readonly Schedule[]
  /** Its retention rules (each also run by one of its `schedules`). */
  purges?: readonly Purge[]
}

/** The handlers and schedules one worker runs, built from the module list (`buildJobRegistry(MODULES)`). */
export interface JobRegistry {
  handlers: ReadonlyMap<string, JobHandler>
  schedules: readonly Schedule[]
}

/**
 * A schedule's handler: runs the work on one worker at a time through the same runner as everything else;
 * an error is logged and only delays the next run.
 */
function scheduleHandler(schedule: Schedule): JobHandler {
  return async (deps) => {
    try {
      await schedule.run(deps)
    } catch (err) {
      deps.log.error({ err, schedule: schedule.type }, 'scheduled job failed')
    }
    return { retryAt: new Date(deps.clock.now().getTime() + schedule.everyMs) }
  }
}

/** Joins the sources' handlers and schedules; a type claimed twice is a wiring error, refused at start. */
export function buildJobRegistry(sources: readonly JobSource[]): JobRegistry {
  const handlers = new Map<string, JobHandler>()
  const owners = new Map<string, string>()
  const claim = (type: string, owner: string, handler: JobHandler) => {
    const previous = owners.get(type)
    if (previous !== undefined)
      throw new Error(`job type ${type} is claimed by both ${previous} and ${owner}`)
    owners.set(type, owner)
    handlers.set(type, handler)
  }
  const schedules: Schedule[] = []
  for (const source of sources) {
    for (const [type, handler] of Object.entries(source.jobs ?? {})) {
      if (handler) claim(type, source.name, handler)
    }
    for (const schedule of source.schedules ?? []) {
      claim(schedule.type, source.name, scheduleHandler(schedule))
      schedules.push(schedule)
    }
  }
  return { handlers, schedules }
}
