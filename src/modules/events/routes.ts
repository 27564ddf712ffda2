import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import { Event, EventListQuery, EventParams } from './schemas.js'
import { getEvent, listEvents } from './service.js'

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
