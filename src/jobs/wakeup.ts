import { EventEmitter } from 'node:events'
import pg from 'pg'
import type { Logger } from 'pino'

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

export interface WakeSource { close(): Promise<void> }

/** Calls `wake` whenever jobs may be due: in-process signals, plus LISTEN on PostgreSQL (other processes). */
export function listenForJobs(databaseUrl: string | null, log: Logger, wake: () => void): WakeSource {
  local.on('queued', wake)
  let client: pg.Client | null = null
  let closed = false
  let retry: NodeJS.Timeout | null = null

  const connect = async () => {
    if (closed || !databaseUrl) return
    const c = new pg.Client({ connectionString: databaseUrl })
    c.on('notification', () => wake())
    c.on('error', (err) => {
      log.warn({ err: err.message }, 'job notification connection lost; reconnecting')
      client = null
      c.end().catch(() => {})
      if (!closed) retry = setTimeout(() => { void connect() }, 1000).unref()
    })
    try {
      await c.connect()
      await c.query(`LISTEN ${JOBS_CHANNEL}`)
      if (closed) { await c.end(); return }
      client = c
      wake()
    } catch (err) {
      log.warn({ err: (err as Error).message }, 'cannot listen for job notifications; polling only')
      c.end().catch(() => {})
      if (!closed) retry = setTimeout(() => { void connect() }, 5000).unref()
    }
  }
  void connect()

  return {
    async close() {
      closed = true
      local.off('queued', wake)
      if (retry) clearTimeout(retry)
      const c = client
      client = null
      if (c) await c.end().catch(() => {})
    },
  }
}
