import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import { Event, EventListQuery, EventParams, EventStreamHeaders, EventStreamQuery } from './schemas.js'
import { getEvent, listEvents } from './service.js'
import { EventStreams, LATE_COMMIT_WINDOW_MS, serveEventStream } from './stream.js'

const tags = ['Events']

/** /v1/events: the event store, readable with any scope (30 days). */
export function registerEvents(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get('/v1/events', {
    schema: {
      tags,
      summary: 'List events, newest first',
      description: 'Any valid token may read events (no scope). Events are kept 30 days. Filters: `type` (exact, or `prefix.*`), '
        + '`created[gte]`, `created[gt]`, `created[lte]`, `created[lt]` (ISO 8601 timestamp or Unix seconds).',
      querystring: EventListQuery,
      response: { 200: ListEnvelope(Event, 'Event') },
    },
  }, async (req) => listEvents(deps, req.ctx, req.query))

  const streams = new EventStreams(deps.config.eventStream)
  base.addHook('preClose', (done) => { streams.closeAll(); done() })
  const stream = deps.config.eventStream
  app.get('/v1/events/stream', {
    schema: {
      tags,
      summary: 'Stream events as they happen (server-sent events)',
      description: 'Any valid token (no scope). A `text/event-stream` of the organization\'s events of the token\'s environment, oldest first: '
        + 'each message is `id: evt_…`, `event: <type>`, `data: <the event JSON, as GET /v1/events/{id} answers it>`. Without `Last-Event-ID` '
        + 'the stream starts with the events created after it opens; with it (header, or `last_event_id`), every retained event created after '
        + 'that one comes first. The stream\'s position comes as an `id:` line without data when it opens and with each heartbeat, so a client '
        + 'reconnecting with the last id it saw misses nothing, even before its first event. A comment line (`: heartbeat`) is sent after '
        + `${stream.heartbeatMs / 1000} s without an event. New events appear within about ${stream.pollMs} ms, whichever node wrote them; one whose `
        + `transaction committed after a later event's is still sent if it committed within ${LATE_COMMIT_WINDOW_MS / 1000} s. The server closes a stream after `
        + `${Math.round(stream.lifetimeMs / 60_000)} minutes and when it stops: reconnect with \`Last-Event-ID\` (EventSource does; \`retry:\` is 1 s). `
        + `At most ${stream.maxPerScope} streams per environment and ${stream.maxConnections} per server are open at once; more answer 429 rate_limited with Retry-After. `
        + 'Deliveries are at least once: deduplicate on the event id.',
      querystring: EventStreamQuery,
      headers: EventStreamHeaders,
      response: {
        200: {
          description: 'The event stream (it does not end by itself)',
          content: { 'text/event-stream': { schema: Type.String({ examples: ['id: evt_01JD3R2B4C6D8E0F2G4H6J8K0M\nevent: cardholder.created\ndata: {"id":"evt_01JD3R2B4C6D8E0F2G4H6J8K0M","object":"event",…}\n\n'] }) } },
        },
      },
    },
    config: { errors: ['invalid_parameter', 'rate_limited'] },
  }, async (req, reply) => serveEventStream(deps, streams, req, reply, req.query))

  app.get('/v1/events/:event_id', {
    schema: {
      tags,
      summary: 'Retrieve an event',
      description: 'Any valid token may read events (no scope). Events older than 30 days answer event_not_found.',
      params: EventParams,
      response: { 200: Event },
    },
    config: { errors: ['event_not_found'] },
  }, async (req) => getEvent(deps, req.ctx, req.params.event_id))
}
