import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import { Event, EventParams, readableTypes } from '../events/index.js'
import { eventDeliveries, listEndpointDeliveries } from './delivery-log.js'
import { registerWebhookOperator } from './operator-routes.js'
import { replayOwnEndpoint, replayOwnEvent, sendTestEvent } from './replay.js'
import {
  DeliveryListQuery,
  EmptyBody,
  EndpointListQuery,
  EndpointParams,
  EndpointReplayRequest,
  EventReplayRequest,
  Replay,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointDeleted,
  webhookEndpointRequests,
} from './schemas.js'
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Webhook endpoints']
const scope = 'webhooks:write'

/**
 * /v1/webhook_endpoints with their delivery log, replays and test event, and the replay of one event
 * (`POST /v1/events/{id}/replay`), all with scope webhooks:write; and the operator's replay and delivery-log calls.
 */
export function registerWebhooks(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { create: WebhookEndpointCreate, update: WebhookEndpointUpdate } = webhookEndpointRequests(
    deps.config.baseUrl,
  )

  app.post(
    '/v1/webhook_endpoints',
    {
      schema: {
        tags,
        summary: 'Create a webhook endpoint',
        description:
          'Answers 201 with the `whsec_` signing secret, shown only here and by rotate_secret. The URL must be HTTPS on a ' +
          'host that resolves to public addresses only (checked again at every delivery). In the sandbox of a local `npm start` ' +
          '(and wherever `WEBHOOK_URL_POLICY` allows it) plain `http://` to a receiver on your own machine or network, such as ' +
          '`http://127.0.0.1:4242/webhooks`, is accepted too. At most 10 endpoints per environment.',
        body: WebhookEndpointCreate,
        response: { 201: WebhookEndpoint },
      },
      config: { scope, errors: ['invalid_webhook_url', 'webhook_endpoint_limit_reached'] },
    },
    async (req, reply) =>
      reply.code(201).send(await createEndpoint(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/webhook_endpoints',
    {
      schema: {
        tags,
        summary: 'List webhook endpoints, newest first',
        querystring: EndpointListQuery,
        response: { 200: ListEnvelope(WebhookEndpoint, 'WebhookEndpoint') },
      },
      config: { scope },
    },
    async (req) => listEndpoints(deps, req.ctx, req.query),
  )

  app.get(
    '/v1/webhook_endpoints/:webhook_endpoint_id',
    {
      schema: {
        tags,
        summary: 'Retrieve a webhook endpoint (without its secret)',
        params: EndpointParams,
        response: { 200: WebhookEndpoint },
      },
      config: { scope, errors: ['webhook_endpoint_not_found'] },
    },
    async (req) => getEndpoint(deps, req.ctx, req.params.webhook_endpoint_id),
  )

  app.patch(
    '/v1/webhook_endpoints/:webhook_endpoint_id',
    {
      schema: {
        tags,
        summary: 'Update a webhook endpoint',
        description:
          '`status: "enabled"` re-enables an endpoint disabled after 72 hours of failures; events missed meanwhile are replayed from the console.',
        params: EndpointParams,
        body: WebhookEndpointUpdate,
        response: { 200: WebhookEndpoint },
      },
      config: { scope, errors: ['webhook_endpoint_not_found', 'invalid_webhook_url'] },
    },
    async (req) =>
      updateEndpoint(unitOf(req, deps), req.ctx, req.params.webhook_endpoint_id, req.body),
  )

  app.delete(
    '/v1/webhook_endpoints/:webhook_endpoint_id',
    {
      schema: {
        tags,
        summary: 'Delete a webhook endpoint',
        params: EndpointParams,
        response: { 200: WebhookEndpointDeleted },
      },
      config: { scope, errors: ['webhook_endpoint_not_found'] },
    },
    async (req) => deleteEndpoint(deps, req.ctx, req.params.webhook_endpoint_id),
  )

  app.post(
    '/v1/webhook_endpoints/:webhook_endpoint_id/rotate_secret',
    {
      schema: {
        tags,
        summary: 'Rotate the signing secret',
        description:
          'Answers the endpoint with its new `secret`. For 24 hours both secrets sign every delivery (two `v1=` values).',
        params: EndpointParams,
        body: EmptyBody,
        response: { 200: WebhookEndpoint },
      },
      config: { scope, errors: ['webhook_endpoint_not_found'] },
    },
    async (req) => rotateSecret(unitOf(req, deps), req.ctx, req.params.webhook_endpoint_id),
  )

  app.get(
    '/v1/webhook_endpoints/:webhook_endpoint_id/deliveries',
    {
      schema: {
        tags,
        summary: "An endpoint's delivery log, newest first",
        description:
          'One `webhook_delivery` per event sent (or to be sent) to the endpoint, each with every attempt made: when it ' +
          'started, how long it took, the HTTP status answered or why it failed. Filters: `status` (`failed` includes deliveries ' +
          'closed unsent because the endpoint was disabled or deleted) and `event_type` (an exact type or a prefix wildcard such as ' +
          '`card.*`). Deliveries go with their events after 30 days.',
        params: EndpointParams,
        querystring: DeliveryListQuery,
        response: { 200: ListEnvelope(WebhookDelivery, 'WebhookDelivery') },
      },
      config: { scope, errors: ['webhook_endpoint_not_found'] },
    },
    async (req) => listEndpointDeliveries(deps, req.ctx, req.params.webhook_endpoint_id, req.query),
  )

  app.post(
    '/v1/webhook_endpoints/:webhook_endpoint_id/replay',
    {
      schema: {
        tags,
        summary: "Replay an endpoint's events since a time",
        description:
          'Sends the endpoint again every retained event its `enabled_events` takes (and its own test events) created at or ' +
          'after `since`, delivered or not, each with the next `Svc-Delivery-Attempt` number. `since` is an RFC 3339 timestamp at ' +
          'most 30 days ago (events are kept 30 days; older is `invalid_parameter`). The endpoint must be enabled ' +
          '(`invalid_parameter` naming `webhook_endpoint_id` otherwise). Only the types the token reads are sent again ' +
          '(each event is read with the scope of its object, as `GET /v1/events` lists them).',
        params: EndpointParams,
        body: EndpointReplayRequest,
        response: { 200: Replay },
      },
      config: { scope, errors: ['webhook_endpoint_not_found'] },
    },
    async (req) => {
      const readable = readableTypes(req.ctx.scopes)
      return replayOwnEndpoint(
        unitOf(req, deps),
        req.ctx,
        readable,
        req.params.webhook_endpoint_id,
        req.body.since,
      )
    },
  )

  app.post(
    '/v1/webhook_endpoints/:webhook_endpoint_id/test',
    {
      schema: {
        tags,
        summary: 'Send a test event to the endpoint',
        description:
          'Records a `webhook_endpoint.test` event carrying the endpoint and delivers it to this endpoint only, whatever its ' +
          '`enabled_events` (no other endpoint receives it, not even one subscribed to `*`), signed and retried like any event. ' +
          'Answers the event; its delivery appears in the delivery log. The endpoint must be enabled.',
        params: EndpointParams,
        body: EmptyBody,
        response: { 200: Event },
      },
      config: { scope, errors: ['webhook_endpoint_not_found'] },
    },
    async (req) => sendTestEvent(unitOf(req, deps), req.ctx, req.params.webhook_endpoint_id),
  )

  app.get(
    '/v1/events/:event_id/deliveries',
    {
      schema: {
        tags: ['Events'],
        summary: "An event's deliveries, one per endpoint",
        description:
          'One `webhook_delivery` per endpoint the event was sent (or is to be sent) to, each with every attempt made, in the ' +
          'shape of the endpoint delivery log. At most one per endpoint (10 per environment), so the list is never paged ' +
          '(`has_more` is false). Needs `webhooks:write`, like the delivery log. Events older than 30 days answer event_not_found.',
        params: EventParams,
        response: { 200: ListEnvelope(WebhookDelivery, 'WebhookDelivery') },
      },
      config: { scope, errors: ['event_not_found'] },
    },
    async (req) => ({
      object: 'list' as const,
      url: `/v1/events/${req.params.event_id}/deliveries`,
      data: await eventDeliveries(deps, req.ctx, req.params.event_id),
      has_more: false,
      next_cursor: null,
    }),
  )

  app.post(
    '/v1/events/:event_id/replay',
    {
      schema: {
        tags: ['Events'],
        summary: 'Replay an event',
        description:
          'Sends the stored event again, with the next `Svc-Delivery-Attempt` number, to `webhook_endpoint_id` (one of your ' +
          'enabled endpoints) or, without it, to every enabled endpoint whose `enabled_events` takes its type (`*`, the type or its ' +
          'prefix wildcard). A `webhook_endpoint.test` event goes only to the endpoint it tested. A replay sends deliveries, ' +
          'so it needs `webhooks:write`, and the token must read the event: an event of a type whose object its scopes do ' +
          'not read answers 403 insufficient_scope, as `GET /v1/events/{event_id}` does. Events older than 30 days answer ' +
          'event_not_found.',
        params: EventParams,
        body: EventReplayRequest,
        response: { 200: Replay },
      },
      config: { scope, errors: ['event_not_found', 'webhook_endpoint_not_found'] },
    },
    async (req) => {
      const readable = readableTypes(req.ctx.scopes)
      return replayOwnEvent(
        unitOf(req, deps),
        req.ctx,
        readable,
        req.params.event_id,
        req.body?.webhook_endpoint_id,
      )
    },
  )

  registerWebhookOperator(app as unknown as FastifyInstance, deps)
}
