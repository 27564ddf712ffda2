import type { FastifyInstance } from 'fastify'
import { Type } from 'typebox'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import {
  Event,
  EventListQuery,
  EventParams,
  EventStreamHeaders,
  EventStreamQuery,
} from './schemas.js'
import { readableTypes } from './catalog.js'
import { getEvent, listEvents } from './service.js'
import { EventStreams, serveEventStream } from './stream.js'
import { ACCESS_CHECK_EVERY_MS, LATE_COMMIT_WINDOW_MS } from './stream-session.js'

const tags = ['Events']

/**
 * What a token reads of the events, in each of these routes and in replays: the types whose object its scopes read.
 * The routes themselves need no scope (a token reading only some objects still reads their events).
 */
const READ_RULE =
  "Each event is read with the scope of its object, the scope of that object's own GET route (the event " +
  'catalogue names it per type: `cardholder.*` needs `cardholders:read`, `card.*` `cards:read`, …): a token sees only the ' +
  'types its scopes read.'

/** /v1/events: the event store (30 days), each event read with the scope of its object. */
export function registerEvents(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/events',
    {
      schema: {
        tags,
        summary: 'List events, newest first',
        description:
          `${READ_RULE} Without \`type\` (or with \`*\`) the list leaves the other types out; a \`type\` ` +
          'naming types the token does not read answers 403 insufficient_scope naming the scope. Events are kept 30 days. ' +
          'Filters: `type` (exact, or `prefix.*`), `created[gte]`, `created[gt]`, `created[lte]`, `created[lt]` (ISO 8601 ' +
          'timestamp or Unix seconds).',
        querystring: EventListQuery,
        response: { 200: ListEnvelope(Event, 'Event') },
      },
      config: { errors: ['insufficient_scope'] },
    },
    async (req) => listEvents(deps, req.ctx, readableTypes(req.ctx.scopes), req.query),
  )

  const streams = new EventStreams(deps.config.eventStream)
  base.addHook('preClose', (done) => {
    streams.closeAll()
    done()
  })
  const stream = deps.config.eventStream
  app.get(
    '/v1/events/stream',
    {
      schema: {
        tags,
        summary: 'Stream events as they happen (server-sent events)',
        description:
          `${READ_RULE} A \`types\` naming types the token does not read answers 403 insufficient_scope ` +
          "naming the scope. A `text/event-stream` of the organization's events of the token's environment, oldest first: " +
          'each message is `id: evt_…`, `event: <type>`, `data: <the event JSON, as GET /v1/events/{id} answers it>`. Without `Last-Event-ID` ' +
          'the stream starts with the events created after it opens; with it (header, or `last_event_id`), every retained event created after ' +
          "that one comes first. The stream's position comes as an `id:` line without data when it opens and with each heartbeat, so a client " +
          'reconnecting with the last id it saw misses nothing, even before its first event. A comment line (`: heartbeat`) is sent after ' +
          `${stream.heartbeatMs / 1000} s without an event. New events appear within about ${stream.pollMs} ms, whichever node wrote them; one whose ` +
          `transaction committed after a later event's is still sent if it committed within ${LATE_COMMIT_WINDOW_MS / 1000} s. The server closes a stream after ` +
          `${Math.round(stream.lifetimeMs / 60_000)} minutes and when it stops: reconnect with \`Last-Event-ID\` (EventSource does; \`retry:\` is 1 s). ` +
          `At most ${stream.maxPerScope} streams per environment and ${stream.maxConnections} per server are open at once; more answer 429 rate_limited with Retry-After. ` +
          `A stream ends within ${ACCESS_CHECK_EVERY_MS / 1000} s of its token no longer granting access (its client revoked, ` +
          'the token expired, the address no longer allowed). A reader that stops reading is not buffered for: the server ' +
          'stops reading events for it while its connection is full, and cuts the connection once more than ' +
          `${stream.maxBehind} events wait for it; resume with \`Last-Event-ID\`. ` +
          'Deliveries are at least once: deduplicate on the event id.',
        querystring: EventStreamQuery,
        headers: EventStreamHeaders,
        response: {
          200: {
            description: 'The event stream (it does not end by itself)',
            content: {
              'text/event-stream': {
                schema: Type.String({
                  examples: [
                    'id: evt_01JD3R2B4C6D8E0F2G4H6J8K0M\nevent: cardholder.created\ndata: {"id":"evt_01JD3R2B4C6D8E0F2G4H6J8K0M","object":"event",…}\n\n',
                  ],
                }),
              },
            },
          },
        },
      },
      config: { errors: ['invalid_parameter', 'insufficient_scope', 'rate_limited'] },
    },
    async (req, reply) => serveEventStream(deps, streams, req, reply, req.query),
  )

  app.get(
    '/v1/events/:event_id',
    {
      schema: {
        tags,
        summary: 'Retrieve an event',
        description:
          `${READ_RULE} An event of a type the token does not read answers 403 insufficient_scope naming ` +
          'the scope; events older than 30 days answer event_not_found.',
        params: EventParams,
        response: { 200: Event },
      },
      config: { errors: ['event_not_found', 'insufficient_scope'] },
    },
    async (req) => getEvent(deps, req.ctx, readableTypes(req.ctx.scopes), req.params.event_id),
  )
}
