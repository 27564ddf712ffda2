import type { SvcCore } from './core.js'
import { SvcError } from './errors.js'
import { Events } from './resources/platform.js'
import type { SvcEvent } from './webhooks.js'

export interface EventStreamOptions {
  /** Subscription forms, as webhook endpoints take them: `card.*`, `authorization.created`, `*` (default every type). */
  types?: string[]
  /** Resume after this event (`Last-Event-ID`); without it the stream starts with the events created after it opens. */
  lastEventId?: string
  /** Stops the stream (the iteration ends). */
  signal?: AbortSignal
  /** Reconnect after a dropped connection, resuming from the last event received (default true). */
  reconnect?: boolean
  /** Called each time a connection opens (`resumedFrom` is the Last-Event-ID sent, if any). */
  onConnect?: (info: { resumedFrom: string | undefined }) => void
  /** Called when a connection ends or fails, before the reconnection delay. */
  onDisconnect?: (info: { error: unknown; retryInMs: number }) => void
}

/** One server-sent event as read off the wire. */
interface SseMessage {
  id?: string
  event?: string
  data: string
  retry?: number
}

/** Splits a text/event-stream body into messages (comments, the heartbeats, are dropped). */
async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder()
  let buffer = ''
  let message: SseMessage = { data: '' }
  let hasData = false
  const reader = body.getReader()
  try {
    for (;;) {
      const { value, done } = await reader.read()
      if (done) return
      buffer += decoder.decode(value, { stream: true })
      let newline: number
      while ((newline = buffer.search(/\r\n|\n|\r/)) >= 0) {
        const line = buffer.slice(0, newline)
        buffer = buffer.slice(newline + (buffer.startsWith('\r\n', newline) ? 2 : 1))
        if (line === '') {
          if (hasData || message.retry !== undefined || message.id !== undefined) yield message
          message = { data: '' }
          hasData = false
          continue
        }
        if (line.startsWith(':')) continue
        const colon = line.indexOf(':')
        const field = colon < 0 ? line : line.slice(0, colon)
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
        if (field === 'data') {
          message.data = hasData ? `${message.data}\n${value}` : value
          hasData = true
        } else if (field === 'id') message.id = value
        else if (field === 'event') message.event = value
        else if (field === 'retry' && /^\d+$/.test(value)) message.retry = Number(value)
      }
    }
  } finally {
    reader.releaseLock()
    await body.cancel().catch(() => {})
  }
}

/** `svc.events`: the events API, and `stream()` over `GET /v1/events/stream`. */
export class EventsWithStream extends Events {
  constructor(core: SvcCore) {
    super(core)
  }

  /**
   * The organization's events of the token's environment as they happen (server-sent events), oldest first:
   * `for await (const event of svc.events.stream({ types: ['card.*'] }))`. A dropped connection is reopened with
   * `Last-Event-ID`, so nothing retained is missed; refusals (a missing scope, a bad type) end the iteration with
   * their `SvcError`.
   */
  async *stream(options: EventStreamOptions = {}): AsyncGenerator<SvcEvent> {
    let lastEventId = options.lastEventId
    let retryMs = 1000
    let failures = 0
    const query = options.types?.length ? { types: options.types.join(',') } : {}
    while (!options.signal?.aborted) {
      let error: unknown = null
      try {
        const res = await this.core.openStream(
          '/v1/events/stream',
          query,
          lastEventId ? { 'last-event-id': lastEventId } : {},
          options.signal,
        )
        options.onConnect?.({ resumedFrom: lastEventId })
        failures = 0
        for await (const message of readSse(res.body!)) {
          if (message.retry !== undefined) retryMs = message.retry
          // An id without data is the stream's position (at its start, and with heartbeats): resume from there.
          if (message.id) lastEventId = message.id
          if (!message.data) continue
          yield JSON.parse(message.data) as SvcEvent
        }
      } catch (err) {
        if (options.signal?.aborted) return
        // A refusal will not change by asking again (a 5xx or 429 may).
        if (
          err instanceof SvcError &&
          err.status !== undefined &&
          err.status < 500 &&
          err.status !== 429
        )
          throw err
        error = err
      }
      if (options.reconnect === false) {
        if (error) throw error
        return
      }
      failures++
      const delay =
        failures <= 1 ? retryMs : Math.max(retryMs, this.core.retryBackoff(Math.min(failures, 6)))
      options.onDisconnect?.({ error, retryInMs: delay })
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delay)
        options.signal?.addEventListener(
          'abort',
          () => {
            clearTimeout(timer)
            resolve()
          },
          { once: true },
        )
      })
    }
  }
}
