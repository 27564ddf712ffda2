import type { ServerResponse } from 'node:http'
import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { lowestIdAt } from '../../lib/ids.js'
import * as repo from './repo.js'
import { presentEvent, retentionStart } from './service.js'

/** Event ids are made before their transaction commits: one may appear below the cursor this long after it was made. */
export const LATE_COMMIT_WINDOW_MS = 5_000
/** How often a stream looks again at the late-commit window. */
const LATE_SWEEP_EVERY_MS = 1_000
/** Rows read per query; also the most a stream writes past a full connection (the batch it had read). */
export const STREAM_BATCH = 200
/** How often an open stream asks whether its token still grants access (revoked client, expiry, allowlists). */
export const ACCESS_CHECK_EVERY_MS = 1_000

export interface StreamSessionOptions {
  deps: AppDeps
  req: FastifyRequest
  /** The hijacked response, its head already written. */
  raw: ServerResponse
  /** The id after which the stream starts (`Last-Event-ID`, or the lowest id of the moment it opened). */
  start: string
  /** Whether an event of this type goes to this stream (the caller's scopes and its `types`). */
  wanted: (type: string) => boolean
}

/**
 * One open event stream: reads its scope's events by id cursor every `pollMs` and writes those it wants, until it is
 * closed. Back-pressure: once `write` answers false (the reader stopped reading and the connection's buffers are full)
 * it finishes the batch it had read and reads no more events until the connection drains, counting meanwhile (ids and
 * types only) the events waiting for it; when more than `maxBehind` wait, the connection is cut, and the reader resumes
 * with its last event id. So a stalled reader costs the server one connection's buffer and at most one batch
 * (`STREAM_BATCH` events), never the events made since. Every second, and before
 * it writes any event, it asks whether its token still grants access, and ends when not.
 */
export class StreamSession {
  private closed = false
  private wake: (() => void) | null = null
  private cursor: string
  /** Ids sent in the late-commit window, so a sweep sends none twice. */
  private readonly sent = new Map<string, number>()
  private lastWrite = Date.now()
  private lastSweep = 0
  private lastAccessCheck = Date.now()
  /** While the connection is full: how far the count of waiting events has read, and how many it found. */
  private full: { counted: string; waiting: number } | null = null
  /** When the connection first filled since the last complete sweep: the next sweep looks back from there. */
  private pausedAt: number | null = null
  private readonly scope: { organizationId: string; environment: string }

  constructor(private readonly o: StreamSessionOptions) {
    this.cursor = o.start
    this.scope = { organizationId: o.req.ctx.organizationId, environment: o.req.ctx.environment }
    o.raw.on('drain', () => {
      this.full = null
      this.wake?.()
    })
  }

  /** Ends the stream: its body ends, or, while the connection is full, the connection is cut (nothing gets through). */
  close(comment?: string): void {
    if (this.closed) return
    this.closed = true
    this.wake?.()
    const { raw } = this.o
    if (raw.writableEnded || raw.destroyed) return
    if (this.full) raw.destroy()
    else raw.end(comment ? `: ${comment}\n\n` : undefined)
  }

  /** Serves the stream until it is closed (by `close`, the client leaving, its token's access ending, or a cut-off). */
  async run(): Promise<void> {
    const config = this.o.deps.config.eventStream
    while (!this.closed) {
      if (!(await this.accessGranted('due'))) break
      if (this.full) await this.countWaiting()
      else if (Date.now() - this.lastSweep >= LATE_SWEEP_EVERY_MS) await this.sweep()
      else await this.deliver(this.cursor)
      if (!this.closed && !this.full && Date.now() - this.lastWrite >= config.heartbeatMs) {
        this.write(`id: ${this.cursor}\n: heartbeat ${new Date().toISOString()}\n\n`)
      }
      if (this.closed) break
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, config.pollMs)
        this.wake = () => {
          clearTimeout(timer)
          resolve()
        }
      })
      this.wake = null
    }
  }

  /**
   * The token's checks again: every second (`due`), and before any event is written (`now`). Answered from the token
   * cache, which every revocation clears (on other nodes through PostgreSQL's NOTIFY), so a revoked token's stream
   * sends nothing committed after the revocation reached this node. Ends the stream when they fail.
   */
  private async accessGranted(when: 'due' | 'now'): Promise<boolean> {
    if (when === 'due' && Date.now() - this.lastAccessCheck < ACCESS_CHECK_EVERY_MS) return true
    this.lastAccessCheck = Date.now()
    if (await this.o.req.accessStillGranted()) return true
    this.close(
      'access ended: the token was revoked, expired or is not allowed from this address; ' +
        'reconnect with a new token',
    )
    return false
  }

  /** Writes one message; a full connection (`write` answers false) stops the stream's reading until it drains. */
  private write(text: string): void {
    this.lastWrite = Date.now()
    if (this.o.raw.write(text)) return
    this.full = { counted: this.cursor, waiting: 0 }
    this.pausedAt ??= Date.now()
  }

  /**
   * Sends the wanted events after `after` not sent yet, oldest first, a batch at a time, until none is left or the
   * connection is full: the batch read is written whole (rows already read are not read again), then no more is read.
   */
  private async deliver(after: string): Promise<void> {
    for (;;) {
      const rows = await repo.eventsAfter(
        this.o.deps.db,
        this.scope,
        after,
        retentionStart(this.o.deps),
        STREAM_BATCH,
      )
      if (
        rows.some((r) => !this.sent.has(r.id) && this.o.wanted(r.type)) &&
        !(await this.accessGranted('now'))
      )
        return
      for (const row of rows) {
        if (this.closed) return
        after = row.id
        if (row.id > this.cursor) this.cursor = row.id
        if (this.sent.has(row.id)) continue
        this.sent.set(row.id, Date.now())
        if (!this.o.wanted(row.type)) continue
        this.write(
          `id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(presentEvent(row))}\n\n`,
        )
      }
      if (rows.length < STREAM_BATCH || this.closed || this.full) return
    }
  }

  /**
   * Events whose transaction committed after a later one's: reads again from 5 s before now (or before the connection
   * filled, when it did since the last sweep), never below the start, sending those not sent yet.
   */
  private async sweep(): Promise<void> {
    this.lastSweep = Date.now()
    const from = Math.min(this.lastSweep, this.pausedAt ?? this.lastSweep)
    for (const [id, at] of this.sent)
      if (at < from - 2 * LATE_COMMIT_WINDOW_MS) this.sent.delete(id)
    const windowStart = lowestIdAt('evt', new Date(from - LATE_COMMIT_WINDOW_MS))
    const recent = windowStart < this.cursor ? windowStart : this.cursor
    await this.deliver(windowStart > this.o.start ? recent : this.o.start)
    if (!this.full) this.pausedAt = null
  }

  /** While the connection is full: counts the wanted events made since, and cuts the connection past `maxBehind`. */
  private async countWaiting(): Promise<void> {
    const { deps } = this.o
    for (;;) {
      const full = this.full
      if (!full) return
      const rows = await repo.eventTypesAfter(
        deps.db,
        this.scope,
        full.counted,
        retentionStart(deps),
        STREAM_BATCH,
      )
      if (this.full !== full) return // drained meanwhile
      for (const row of rows) {
        full.counted = row.id
        if (this.o.wanted(row.type)) full.waiting++
      }
      if (full.waiting > deps.config.eventStream.maxBehind) {
        this.o.req.log.info(
          { waiting: full.waiting },
          'event stream cut off: its reader stopped reading',
        )
        this.close()
        return
      }
      if (rows.length < STREAM_BATCH || this.closed) return
    }
  }
}
