import { EventEmitter } from 'node:events'
import type { Logger } from 'pino'
import { listenChannel } from '../db/listen.js'

/** The PostgreSQL channel a committed transaction notifies when it queued work that is due now. */
export const JOBS_CHANNEL = 'svc_jobs'

const local = new EventEmitter()
local.setMaxListeners(0)

/**
 * Tells runners in this process that work may be due. Called before the enqueuing transaction commits:
 * on PGlite the runner's claim waits on the single connection until that commit; on PostgreSQL the
 * NOTIFY sent at commit wakes every worker process.
 */
export function signalJobsQueued(): void {
  local.emit('queued')
}

export interface WakeSource {
  close(): Promise<void>
}

/** Calls `wake` whenever jobs may be due: in-process signals, plus LISTEN on PostgreSQL (other processes). */
export function listenForJobs(
  databaseUrl: string | null,
  log: Logger,
  wake: () => void,
): WakeSource {
  local.on('queued', wake)
  const listener = databaseUrl
    ? listenChannel(databaseUrl, JOBS_CHANNEL, 'jobs (polling meanwhile)', log, {
        notify: wake,
        up: wake,
      })
    : null
  return {
    async close() {
      local.off('queued', wake)
      await listener?.close()
    },
  }
}
