import { Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'

const strict = { additionalProperties: false }

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'HTTPS URL on a publicly resolvable host (invalid_webhook_url otherwise)' })
const EnabledEvents = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1, maxItems: 100,
  description: 'Event types to receive, from the event catalogue, or ["*"] for every type',
})
const Description = Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])
const Status = Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])

export const WebhookEndpoint = Type.Object({
  id: Type.String({ description: 'whe_ id' }),
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  description: Description,
  enabled_events: Type.Array(Type.String()),
  status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], {
    description: 'disabled: nothing is delivered (set by you, or automatically after 72 hours of continuous failure)',
  }),
  api_version: Type.String({ description: 'Version events are serialized with' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  secret: Type.Optional(Type.String({ description: 'whsec_ signing secret: returned only by create and rotate_secret' })),
}, {
  title: 'WebhookEndpoint',
  // As retrieved: `secret` appears only in the answers of create and rotate_secret.
  examples: [{
    id: 'whe_01JD3R5M7N9P1Q3R5S7T9V1W3X', object: 'webhook_endpoint', url: 'https://hooks.example.com/svc',
    description: 'Production event receiver', enabled_events: ['cardholder.created', 'card.issued', 'authorization.created'], status: 'enabled',
    api_version: '2026-11-01', created_at: '2026-11-01T12:00:00.000Z', updated_at: '2026-11-01T12:00:00.000Z',
  }],
})

export const WebhookEndpointCreate = Type.Object({
  url: Url,
  enabled_events: EnabledEvents,
  description: Type.Optional(Description),
}, { ...strict, title: 'WebhookEndpointCreateRequest' })

export const WebhookEndpointUpdate = Type.Object({
  url: Type.Optional(Url),
  enabled_events: Type.Optional(EnabledEvents),
  description: Type.Optional(Description),
  status: Type.Optional(Status),
}, { ...strict, title: 'WebhookEndpointUpdateRequest' })

export const WebhookEndpointDeleted = Type.Object({
  id: Type.String(),
  object: Type.Literal('webhook_endpoint'),
  deleted: Type.Literal(true),
}, {
  title: 'WebhookEndpointDeleted',
  examples: [{ id: 'whe_01JD3R5M7N9P1Q3R5S7T9V1W3X', object: 'webhook_endpoint', deleted: true }],
})

export const EndpointParams = Type.Object({ webhook_endpoint_id: Type.String({ maxLength: 200 }) })
export const EndpointListQuery = Type.Object(PageQuery, strict)
export const EmptyBody = Type.Object({}, strict)
