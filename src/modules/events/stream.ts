import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import type { EventStreamConfig } from '../../config.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { isId, lowestIdAt } from '../../lib/ids.js'
import { readableTypes, readsType, subscribes, subscriptionRefusal } from './catalog.js'
import { requireReadableForms } from './service.js'
import { StreamSession } from './stream-session.js'

/**
 * `GET /v1/events/stream`: the caller's events as server-sent events. Each open stream reads the events table by id
 * cursor every `pollMs` (docs/decisions/event-stream-polling.md), so any node sees what any other node committed; the
 * reading, back-pressure and access checks of one stream are its `StreamSession`.
 */

/** What clients wait before reconnecting (the SSE `retry:` field). */
const RETRY_MS = 1_000

/** The subscription forms asked for (`types=card.*,authorization.created`); none or `*` is everything. */
export function parseStreamTypes(value: string | undefined, baseUrl: string): string[] | null {
  if (value === undefined || value.trim() === '') return null
  const forms = [
    ...new Set(
      value
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ]
  if (forms.length > 100)
    throw new ApiError('invalid_parameter', {
      param: 'types',
      message: 'types takes at most 100 forms.',
    })
  for (const form of forms) {
    const refusal = subscriptionRefusal(form, baseUrl)
    if (refusal !== null)
      throw new ApiError('invalid_parameter', { param: 'types', message: refusal })
  }
  return forms.includes('*') ? null : forms
}

/** Where a stream starts: after `Last-Event-ID` (header, else the `last_event_id` parameter), else at the present. */
export function streamStart(lastEventId: string | undefined): { cursor: string; resumed: boolean } {
  if (lastEventId === undefined || lastEventId === '')
    return { cursor: lowestIdAt('evt', new Date()), resumed: false }
  if (!isId('evt', lastEventId))
    throw new ApiError('invalid_parameter', {
      param: 'Last-Event-ID',
      message: 'Last-Event-ID must be an event id (evt_…) received from this stream.',
    })
  return { cursor: lastEventId, resumed: true }
}

/** The open streams of one application: the bound on their number, and closing them when the server stops. */
export class EventStreams {
  private readonly open = new Set<() => void>()
  private readonly perScope = new Map<string, number>()

  constructor(private readonly config: EventStreamConfig) {}

  get size(): number {
    return this.open.size
  }

  /** Takes a slot, or refuses with 429 (Retry-After) when the process or the organization's environment is full. */
  acquire(ctx: RequestCtx, close: () => void): () => void {
    const key = `${ctx.organizationId}/${ctx.environment}`
    const mine = this.perScope.get(key) ?? 0
    if (this.open.size >= this.config.maxConnections || mine >= this.config.maxPerScope) {
      throw new ApiError('rate_limited', {
        headers: { 'Retry-After': '5' },
        message:
          this.open.size >= this.config.maxConnections
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

/**
 * Serves one stream on the hijacked reply until the client leaves, the lifetime ends, the server stops, its token no
 * longer grants access or its reader falls too far behind. It carries only the types the token reads (`readableTypes`);
 * `types` naming others answers 403 insufficient_scope before the stream opens.
 */
export async function serveEventStream(
  deps: AppDeps,
  streams: EventStreams,
  req: FastifyRequest,
  reply: FastifyReply,
  query: { types?: string; last_event_id?: string },
): Promise<void> {
  const ctx = req.ctx
  const readable = readableTypes(ctx.scopes)
  const types = parseStreamTypes(query.types, deps.config.baseUrl)
  if (types) requireReadableForms(readable, types, 'types')
  const header = req.headers['last-event-id']
  const start = streamStart((Array.isArray(header) ? header[0] : header) ?? query.last_event_id)
  const raw = reply.raw
  const wanted = (type: string) => readsType(readable, type) && (!types || subscribes(types, type))
  const session = new StreamSession({ deps, req, raw, start: start.cursor, wanted })
  const release = streams.acquire(ctx, () => session.close())
  reply.hijack()
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'svc-request-id': req.id,
  })
  // The position travels as an `id:` with no data (it sets the client's Last-Event-ID without an event), so a client
  // that reconnects before its first event, or after a quiet spell, misses nothing made in between.
  raw.write(
    `retry: ${RETRY_MS}\nid: ${start.cursor}\n: ${start.resumed ? `resuming after ${start.cursor}` : 'streaming events from now'}\n\n`,
  )
  raw.on('close', () => session.close())
  raw.on('error', () => session.close())
  const lifetime = setTimeout(() => session.close(), deps.config.eventStream.lifetimeMs)
  try {
    await session.run()
  } catch (err) {
    req.log.warn({ err }, 'event stream ended by an error')
  } finally {
    clearTimeout(lifetime)
    release()
    session.close()
  }
}
