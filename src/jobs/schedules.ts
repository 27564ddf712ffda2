import { sql } from 'kysely'
import type { AppDeps } from '../app-deps.js'
import { registerJobHandler } from './queue.js'

interface Schedule { type: string; everyMs: number }

const schedules = new Map<string, Schedule>()

/** The fixed id of a recurring job: one row per schedule in the whole deployment, whatever the number of workers. */
export function scheduleJobId(type: string): string {
  return `job_schedule_${type}`
}

/**
 * Registers recurring work (purges, sweeps) as a job that reschedules itself: it runs on one worker at a
 * time through the same runner as everything else, and an error only delays the next run.
 */
export function registerSchedule(type: string, everyMs: number, run: (deps: AppDeps) => Promise<void>): void {
  schedules.set(type, { type, everyMs })
  registerJobHandler(type, async (deps) => {
    try {
      await run(deps)
    } catch (err) {
      deps.log.error({ err, schedule: type }, 'scheduled job failed')
    }
    return { retryAt: new Date(deps.clock.now().getTime() + everyMs) }
  })
}

/** Makes sure every registered schedule has its job row (called when a worker starts; idempotent). */
export async function ensureSchedules(deps: AppDeps): Promise<void> {
  const now = deps.clock.now()
  for (const s of schedules.values()) {
    await sql`INSERT INTO jobs (id, type, payload, state, run_at, attempts, created_at, updated_at)
      VALUES (${scheduleJobId(s.type)}, ${s.type}, '{}', 'queued', ${now}, 0, ${now}, ${now})
      ON CONFLICT (id) DO UPDATE SET state = 'queued' WHERE jobs.state <> 'queued'`.execute(deps.db)
  }
}
