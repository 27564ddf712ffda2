import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import type { EventStreamConfig } from '../../config.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { isId, lowestIdAt } from '../../lib/ids.js'
import { subscribes, subscriptionRefusal } from './catalog.js'
import * as repo from './repo.js'
import { presentEvent, retentionStart } from './service.js'

/**
 * `GET /v1/events/stream`: the caller's events as server-sent events. Each open stream reads the events table by id
 * cursor every `pollMs` (docs/decisions/event-stream-polling.md), so any node sees what any other node committed.
 */

/** Event ids are made before their transaction commits: one may appear below the cursor this long after it was made. */
export const LATE_COMMIT_WINDOW_MS = 5_000
/** How often a stream looks again at the late-commit window. */
const LATE_SWEEP_EVERY_MS = 1_000
/** Rows read per query. */
const BATCH = 200
/** What clients wait before reconnecting (the SSE `retry:` field). */
const RETRY_MS = 1_000

/** The subscription forms asked for (`types=card.*,authorization.created`); none or `*` is everything. */
export function parseStreamTypes(value: string | undefined, baseUrl: string): string[] | null {
  if (value === undefined || value.trim() === '') return null
  const forms = [...new Set(value.split(',').map((s) => s.trim()).filter(Boolean))]
  if (forms.length > 100) throw new ApiError('invalid_parameter', { param: 'types', message: 'types takes at most 100 forms.' })
  for (const form of forms) {
    const refusal = subscriptionRefusal(form, baseUrl)
    if (refusal !== null) throw new ApiError('invalid_parameter', { param: 'types', message: refusal })
  }
  return forms.includes('*') ? null : forms
}

/** Where a stream starts: after `Last-Event-ID` (header, else the `last_event_id` parameter), else at the present. */
export function streamStart(lastEventId: string | undefined): { cursor: string; resumed: boolean } {
  if (lastEventId === undefined || lastEventId === '') return { cursor: lowestIdAt('evt', new Date()), resumed: false }
  if (!isId('evt', lastEventId)) throw new ApiError('invalid_parameter', { param: 'Last-Event-ID', message: 'Last-Event-ID must be an event id (evt_…) received from this stream.' })
  return { cursor: lastEventId, resumed: true }
}

/** The open streams of one application: the bound on their number, and closing them when the server stops. */
export class EventStreams {
  private readonly open = new Set<() => void>()
  private readonly perScope = new Map<string, number>()

  constructor(private readonly config: EventStreamConfig) {}

  get size(): number { return this.open.size }

  /** Takes a slot, or refuses with 429 (Retry-After) when the process or the organization's environment is full. */
  acquire(ctx: RequestCtx, close: () => void): () => void {
    const key = `${ctx.organizationId}/${ctx.environment}`
    const mine = this.perScope.get(key) ?? 0
    if (this.open.size >= this.config.maxConnections || mine >= this.config.maxPerScope) {
      throw new ApiError('rate_limited', {
        headers: { 'Retry-After': '5' },
        message: this.open.size >= this.config.maxConnections
          ? 'Too many open event streams on this server; retry after Retry-After seconds.'
          : `At most ${this.config.maxPerScope} event streams may be open at once for one environment; close one, or retry after Retry-After seconds.`,
      })
    }
    this.open.add(close)
    this.perScope.set(key, mine + 1)
    let released = false
    return () => {
      if (released) return
      released = true
      this.open.delete(close)
      const left = (this.perScope.get(key) ?? 1) - 1
      if (left > 0) this.perScope.set(key, left)
      else this.perScope.delete(key)
    }
  }

  /** Ends every open stream (server shutdown); clients reconnect elsewhere with Last-Event-ID. */
  closeAll(): void {
    for (const close of [...this.open]) close()
  }
}

/** Serves one stream on the hijacked reply until the client leaves, the lifetime ends or the server stops. */
export async function serveEventStream(deps: AppDeps, streams: EventStreams, req: FastifyRequest, reply: FastifyReply, query: { types?: string; last_event_id?: string }): Promise<void> {
  const ctx = req.ctx
  const types = parseStreamTypes(query.types, deps.config.baseUrl)
  const header = req.headers['last-event-id']
  const start = streamStart((Array.isArray(header) ? header[0] : header) ?? query.last_event_id)
  const config = deps.config.eventStream
  let closed = false
  let wake: (() => void) | null = null
  const close = () => {
    if (closed) return
    closed = true
    wake?.()
    if (!reply.raw.writableEnded) reply.raw.end()
  }
  const release = streams.acquire(ctx, close)
  reply.hijack()
  const raw = reply.raw
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'svc-request-id': req.id,
  })
  // The position travels as an `id:` with no data (it sets the client's Last-Event-ID without an event), so a client
  // that reconnects before its first event, or after a quiet spell, misses nothing made in between.
  raw.write(`retry: ${RETRY_MS}\nid: ${start.cursor}\n: ${start.resumed ? `resuming after ${start.cursor}` : 'streaming events from now'}\n\n`)
  raw.on('close', close)
  raw.on('error', close)
  const lifetime = setTimeout(close, config.lifetimeMs)

  const scope = { organizationId: ctx.organizationId, environment: ctx.environment }
  const floor = start.cursor
  let cursor = start.cursor
  /** Ids sent in the late-commit window, so a sweep sends none twice. */
  const sent = new Map<string, number>()
  let lastWrite = Date.now()
  let lastSweep = 0

  const deliver = async (after: string): Promise<void> => {
    for (;;) {
      const rows = await repo.eventsAfter(deps.db, scope, after, retentionStart(deps), BATCH)
      for (const row of rows) {
        after = row.id
        if (row.id > cursor) cursor = row.id
        if (sent.has(row.id)) continue
        sent.set(row.id, Date.now())
        if (types && !subscribes(types, row.type)) continue
        raw.write(`id: ${row.id}\nevent: ${row.type}\ndata: ${JSON.stringify(presentEvent(row))}\n\n`)
        lastWrite = Date.now()
      }
      if (rows.length < BATCH || closed) return
    }
  }

  try {
    while (!closed) {
      const now = Date.now()
      if (now - lastSweep >= LATE_SWEEP_EVERY_MS) {
        // Events whose transaction committed after a later one's: look again at the recent window (not below the start).
        lastSweep = now
        const windowStart = lowestIdAt('evt', new Date(now - LATE_COMMIT_WINDOW_MS))
        for (const [id, at] of sent) if (at < now - 2 * LATE_COMMIT_WINDOW_MS) sent.delete(id)
        await deliver(windowStart > floor ? (windowStart < cursor ? windowStart : cursor) : floor)
      } else {
        await deliver(cursor)
      }
      if (!closed && Date.now() - lastWrite >= config.heartbeatMs) {
        raw.write(`id: ${cursor}\n: heartbeat ${new Date().toISOString()}\n\n`)
        lastWrite = Date.now()
      }
      if (closed) break
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, config.pollMs)
        wake = () => { clearTimeout(timer); resolve() }
      })
      wake = null
    }
  } catch (err) {
    req.log.warn({ err }, 'event stream ended by an error')
  } finally {
    clearTimeout(lifetime)
    release()
    close()
  }
}
