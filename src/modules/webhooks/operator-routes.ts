import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { OPERATOR_CTX, paginate, PageQuery } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { findEvent } from '../events/index.js'
import { deliveriesOfEvent } from './delivery-repo.js'
import { listAttempts, replayEndpoint, replayEvent } from './replay.js'
import { endpointsOfOrganization, findEndpoint, type EndpointRow } from './repo.js'
import { presentEndpoint } from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Operator']
const strict = { additionalProperties: false }
const EventParams = Type.Object({ event_id: Type.String({ maxLength: 200 }) })
const EndpointParams = Type.Object({ webhook_endpoint_id: Type.String({ maxLength: 200 }) })
const Page = Type.Object(PageQuery, strict)

function parseSince(value: string): Date {
  const date = /^\d{1,12}$/.test(value) ? new Date(Number(value) * 1000) : new Date(value)
  if (Number.isNaN(date.getTime()))
    throw new ApiError('invalid_parameter', {
      param: 'since',
      message: 'since must be an ISO 8601 timestamp or Unix seconds.',
    })
  return date
}

async function requireEvent(deps: AppDeps, id: string): Promise<void> {
  if (!isId('evt', id) || !(await findEvent(deps.db, id))) throw new ApiError('event_not_found')
}

async function requireEndpoint(deps: AppDeps, id: string) {
  const row = isId('whe', id) ? await findEndpoint(deps.db, id) : undefined
  if (!row) throw new ApiError('webhook_endpoint_not_found')
  return row
}

/** /operator/v1: replay (one event, or an endpoint's events since a time) and the delivery log, for the console. */
export function registerWebhookOperator(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/operator/v1/events/:event_id/replay',
    {
      schema: {
        tags,
        summary: 'Replay one event',
        description:
          'Re-sends the stored event with a new attempt number to the named endpoint, or to every enabled endpoint subscribed to its type.',
        params: EventParams,
        body: Type.Object(
          { webhook_endpoint_id: Type.Optional(Type.String({ maxLength: 200 })) },
          strict,
        ),
      },
    },
    async (req) =>
      replayEvent(unitOf(req, deps), req.params.event_id, req.body?.webhook_endpoint_id),
  )

  app.post(
    '/operator/v1/webhook_endpoints/:webhook_endpoint_id/replay',
    {
      schema: {
        tags,
        summary: "Replay an endpoint's events since a time",
        description:
          'Re-sends every retained event the endpoint subscribes to, created at or after `since`, delivered or not. The endpoint must be enabled.',
        params: EndpointParams,
        body: Type.Object(
          {
            since: Type.String({
              minLength: 1,
              maxLength: 40,
              description: 'ISO 8601 timestamp or Unix seconds',
            }),
          },
          strict,
        ),
      },
    },
    async (req) =>
      replayEndpoint(unitOf(req, deps), req.params.webhook_endpoint_id, parseSince(req.body.since)),
  )

  app.get(
    '/operator/v1/events/:event_id/delivery_attempts',
    {
      schema: {
        tags,
        summary: 'Delivery attempts of one event, newest first',
        params: EventParams,
        querystring: Page,
      },
    },
    async (req) => {
      await requireEvent(deps, req.params.event_id)
      return listAttempts(
        deps,
        { eventId: req.params.event_id },
        `/operator/v1/events/${req.params.event_id}/delivery_attempts`,
        req.query,
      )
    },
  )

  app.get(
    '/operator/v1/events/:event_id/deliveries',
    {
      schema: { tags, summary: 'Delivery state of one event per endpoint', params: EventParams },
    },
    async (req) => {
      await requireEvent(deps, req.params.event_id)
      const rows = await deliveriesOfEvent(deps.db, req.params.event_id)
      const data = rows.map((d) => ({
        object: 'webhook_delivery',
        event_id: d.event_id,
        webhook_endpoint_id: d.endpoint_id,
        status: d.status,
        attempts: d.attempts,
        next_attempt_at: d.status === 'pending' ? iso(d.next_attempt_at) : null,
        first_failed_at: iso(d.first_failed_at),
        last_attempt_at: iso(d.last_attempt_at),
        delivered_at: iso(d.delivered_at),
      }))
      return {
        object: 'list',
        url: `/operator/v1/events/${req.params.event_id}/deliveries`,
        data,
        has_more: false,
        next_cursor: null,
      }
    },
  )

  app.get(
    '/operator/v1/webhook_endpoints/:webhook_endpoint_id/delivery_attempts',
    {
      schema: {
        tags,
        summary: 'Delivery attempts to one endpoint, newest first',
        params: EndpointParams,
        querystring: Page,
      },
    },
    async (req) => {
      const ep = await requireEndpoint(deps, req.params.webhook_endpoint_id)
      return listAttempts(
        deps,
        { endpointId: ep.id },
        `/operator/v1/webhook_endpoints/${ep.id}/delivery_attempts`,
        req.query,
      )
    },
  )

  app.get(
    '/operator/v1/webhook_endpoints',
    {
      schema: {
        tags,
        summary: 'Webhook endpoints of an organization, newest first',
        querystring: Type.Object({ organization_id: Type.String(), ...PageQuery }, strict),
      },
    },
    async (req) => {
      const { organization_id, ...page } = req.query
      return paginate({
        ctx: OPERATOR_CTX,
        cursors: deps.cursors,
        url: '/operator/v1/webhook_endpoints',
        page,
        sortKey: (r: EndpointRow) => r.id,
        fetch: (bounds) => endpointsOfOrganization(deps.db, organization_id, bounds),
        present: (r) => ({ ...presentEndpoint(r), environment: r.environment }),
      })
    },
  )

  app.get(
    '/operator/v1/webhook_endpoints/:webhook_endpoint_id',
    {
      schema: {
        tags,
        summary: 'Retrieve a webhook endpoint with its delivery health',
        params: EndpointParams,
      },
    },
    async (req) => {
      const r = await requireEndpoint(deps, req.params.webhook_endpoint_id)
      return {
        ...presentEndpoint(r),
        organization_id: r.organization_id,
        environment: r.environment,
      }
    },
  )
}
