import { EventEmitter } from 'node:events'
import { sql } from 'kysely'
import type { Logger } from 'pino'
import { listenChannel, type Listener } from '../db/listen.js'
import { withTx } from '../db/tx.js'
import type { Db } from '../db/types.js'

/** The PostgreSQL channel notified at the commit of anything that changes what a token lookup answers. */
export const AUTH_CHANNEL = 'svc_auth'

/** A cached answer is read again from the database after this long even when nothing was announced. */
const MAX_AGE_MS = 60_000
const MAX_ENTRIES = 50_000

const local = new EventEmitter()
local.setMaxListeners(0)

/**
 * Changes what token lookups answer (a client revoked, a client's or an organization's IP allowlist
 * changed): `fn` runs in a transaction that also notifies `AUTH_CHANNEL`, so every process drops its
 * cached tokens when it commits, and this process drops them right after. Every such write goes
 * through here; otherwise a cached token would outlive its revocation.
 */
export async function changeAuthorization<T>(db: Db, fn: (trx: Db) => Promise<T>): Promise<T> {
  const result = await withTx(db, async (trx) => {
    const value = await fn(trx)
    await sql`SELECT pg_notify(${AUTH_CHANNEL}, '')`.execute(trx)
    return value
  })
  local.emit('changed')
  return result
}

/**
 * Verified access tokens by SHA-256, so most requests need no token lookup. Correct only while every
 * change that could alter a lookup reaches it: in-process through `changeAuthorization`, from other
 * processes through LISTEN on PostgreSQL. While that connection is down the cache answers nothing
 * (every request reads the database), and it starts empty when the connection is back.
 *
 * A lookup that began before a change may finish after it with the old answer: `generation` moves on
 * every change, and an answer is kept only if no change happened while it was being read.
 */
export class TokenCache<Row> {
  private readonly entries = new Map<string, { row: Row; until: number }>()
  private generation = 0
  private live: boolean
  private readonly listener: Listener | null
  private readonly onChange = () => this.reset()

  constructor(databaseUrl: string | null, log: Logger) {
    local.on('changed', this.onChange)
    // Embedded PGlite: one process owns the database, so in-process announcements are all there are.
    this.live = databaseUrl === null
    this.listener =
      databaseUrl === null
        ? null
        : listenChannel(databaseUrl, AUTH_CHANNEL, 'token cache (off meanwhile)', log, {
            notify: this.onChange,
            up: () => {
              this.reset()
              this.live = true
            },
            down: () => {
              this.live = false
              this.reset()
            },
          })
  }

  /** Where a lookup starts: pass it to `put` with the answer. */
  mark(): number {
    return this.generation
  }

  get(tokenHash: string, nowMs: number): Row | undefined {
    if (!this.live) return undefined
    const entry = this.entries.get(tokenHash)
    if (!entry) return undefined
    if (entry.until <= nowMs) {
      this.entries.delete(tokenHash)
      return undefined
    }
    return entry.row
  }

  /** Keeps an answer read since `mark`, unless something changed meanwhile (the caller still checks expiry on every use). */
  put(tokenHash: string, row: Row, mark: number, nowMs: number): void {
    if (!this.live || mark !== this.generation) return
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear()
    this.entries.set(tokenHash, { row, until: nowMs + MAX_AGE_MS })
  }

  private reset(): void {
    this.generation++
    this.entries.clear()
  }

  async close(): Promise<void> {
    local.off('changed', this.onChange)
    this.live = false
    this.reset()
    await this.listener?.close()
  }
}
