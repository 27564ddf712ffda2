import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import { registerWebhookOperator } from './operator-routes.js'
import { EmptyBody, EndpointListQuery, EndpointParams, WebhookEndpoint, WebhookEndpointDeleted, webhookEndpointRequests } from './schemas.js'
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rotateSecret, updateEndpoint } from './service.js'

const tags = ['Webhook endpoints']
const scope = 'webhooks:write'

/** /v1/webhook_endpoints (scope webhooks:write) and the operator's replay and delivery-log calls. */
export function registerWebhooks(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const { create: WebhookEndpointCreate, update: WebhookEndpointUpdate } = webhookEndpointRequests(deps.config.baseUrl)

  app.post('/v1/webhook_endpoints', {
    schema: {
      tags, summary: 'Create a webhook endpoint',
      description: 'Answers 201 with the `whsec_` signing secret, shown only here and by rotate_secret. The URL must be HTTPS on a '
        + 'host that resolves to public addresses only (checked again at every delivery). In the sandbox of a local `npm start` '
        + '(and wherever `WEBHOOK_URL_POLICY` allows it) plain `http://` to a receiver on your own machine or network, such as '
        + '`http://127.0.0.1:4242/webhooks`, is accepted too. At most 10 endpoints per environment.',
      body: WebhookEndpointCreate,
      response: { 201: WebhookEndpoint },
    },
    config: { scope, errors: ['invalid_webhook_url', 'webhook_endpoint_limit_reached'] },
  }, async (req, reply) => reply.code(201).send(await createEndpoint(deps, req.ctx, req.body)))

  app.get('/v1/webhook_endpoints', {
    schema: { tags, summary: 'List webhook endpoints, newest first', querystring: EndpointListQuery, response: { 200: ListEnvelope(WebhookEndpoint, 'WebhookEndpoint') } },
    config: { scope },
  }, async (req) => listEndpoints(deps, req.ctx, req.query))

  app.get('/v1/webhook_endpoints/:webhook_endpoint_id', {
    schema: { tags, summary: 'Retrieve a webhook endpoint (without its secret)', params: EndpointParams, response: { 200: WebhookEndpoint } },
    config: { scope, errors: ['webhook_endpoint_not_found'] },
  }, async (req) => getEndpoint(deps, req.ctx, req.params.webhook_endpoint_id))

  app.patch('/v1/webhook_endpoints/:webhook_endpoint_id', {
    schema: {
      tags, summary: 'Update a webhook endpoint',
      description: '`status: "enabled"` re-enables an endpoint disabled after 72 hours of failures; events missed meanwhile are replayed from the console.',
      params: EndpointParams, body: WebhookEndpointUpdate, response: { 200: WebhookEndpoint },
    },
    config: { scope, errors: ['webhook_endpoint_not_found', 'invalid_webhook_url'] },
  }, async (req) => updateEndpoint(deps, req.ctx, req.params.webhook_endpoint_id, req.body))

  app.delete('/v1/webhook_endpoints/:webhook_endpoint_id', {
    schema: { tags, summary: 'Delete a webhook endpoint', params: EndpointParams, response: { 200: WebhookEndpointDeleted } },
    config: { scope, errors: ['webhook_endpoint_not_found'] },
  }, async (req) => deleteEndpoint(deps, req.ctx, req.params.webhook_endpoint_id))

  app.post('/v1/webhook_endpoints/:webhook_endpoint_id/rotate_secret', {
    schema: {
      tags, summary: 'Rotate the signing secret',
      description: 'Answers the endpoint with its new `secret`. For 24 hours both secrets sign every delivery (two `v1=` values).',
      params: EndpointParams, body: EmptyBody, response: { 200: WebhookEndpoint },
    },
    config: { scope, errors: ['webhook_endpoint_not_found'] },
  }, async (req) => rotateSecret(deps, req.ctx, req.params.webhook_endpoint_id))

  registerWebhookOperator(app as unknown as FastifyInstance, deps)
}
