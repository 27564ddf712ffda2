import type pg from 'pg'
import type { Logger } from 'pino'

export interface Listener {
  close(): Promise<void>
}

export interface ListenHandlers {
  /** A NOTIFY on the channel arrived. */
  notify(): void
  /** LISTEN is in place (first time or after a reconnect): notifications from now on arrive. */
  up?(): void
  /** The connection is gone: notifications may be missed until `up` is called again. */
  down?(): void
}

/**
 * LISTEN on one PostgreSQL channel over a connection of its own, reconnecting after a loss (1 s) or a
 * failed attempt (5 s). `what` names the channel's purpose in log lines.
 */
export function listenChannel(
  databaseUrl: string,
  channel: string,
  what: string,
  log: Logger,
  handlers: ListenHandlers,
): Listener {
  let client: pg.Client | null = null
  let closed = false
  let retry: NodeJS.Timeout | null = null

  const connect = async () => {
    if (closed) return
    const { default: pg } = await import('pg')
    if (closed) return
    const c = new pg.Client({ connectionString: databaseUrl })
    let lost = false
    const lose = (reason: string) => {
      if (lost || closed) return
      lost = true
      log.warn({ err: reason }, `${what}: notification connection lost; reconnecting`)
      if (client === c) client = null
      handlers.down?.()
      c.end().catch(() => {})
      retry = setTimeout(() => {
        void connect()
      }, 1000).unref()
    }
    c.on('notification', () => handlers.notify())
    c.on('error', (err) => lose(err.message))
    c.on('end', () => {
      if (client === c) lose('connection ended')
    })
    try {
      await c.connect()
      await c.query(`LISTEN ${channel}`)
      if (closed) {
        await c.end()
        return
      }
      client = c
      handlers.up?.()
    } catch (err) {
      lost = true
      log.warn({ err: (err as Error).message }, `${what}: cannot listen for notifications`)
      c.end().catch(() => {})
      if (!closed)
        retry = setTimeout(() => {
          void connect()
        }, 5000).unref()
    }
  }
  void connect()

  return {
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      const c = client
      client = null
      if (c) await c.end().catch(() => {})
    },
  }
}
