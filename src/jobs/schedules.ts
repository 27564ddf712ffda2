import { sql } from 'kysely'
import type { AppDeps } from '../app-deps.js'
import type { JobRegistry } from './registry.js'

/** The fixed id of a recurring job: one row per schedule in the whole deployment, whatever the number of workers. */
export function scheduleJobId(type: string): string {
  return `job_schedule_${type}`
}

/** Makes sure every schedule of the registry has its job row (called when a worker starts; idempotent). */
export async function ensureSchedules(deps: AppDeps, registry: JobRegistry): Promise<void> {
  const now = deps.clock.now()
  for (const s of registry.schedules) {
    await sql`INSERT INTO jobs (id, type, payload, state, run_at, attempts, created_at, updated_at)
      VALUES (${scheduleJobId(s.type)}, ${s.type}, '{}', 'queued', ${now}, 0, ${now}, ${now})
      ON CONFLICT (id) DO UPDATE SET state = 'queued' WHERE jobs.state <> 'queued'`.execute(deps.db)
  }
}
