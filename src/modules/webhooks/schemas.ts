import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { barePrefixRefusals, EVENT_CATALOGUE_PATH, SUBSCRIPTION_FORMS, subscriptionRefusalTemplate } from '../events/index.js'

const strict = { additionalProperties: false }

const Url = Type.String({ minLength: 1, maxLength: 2048, description: 'HTTPS URL on a publicly resolvable host (invalid_webhook_url otherwise); a local `npm start` sandbox also accepts http:// to your own machine' })

/** One `enabled_events` item: `*`, a prefix wildcard (`card.*`) or an exact type, as the event catalogue publishes them. */
const subscriptionForm = (options: Record<string, unknown> = {}) => Type.Enum([...SUBSCRIPTION_FORMS], { type: 'string', ...options })

const ENABLED_EVENTS = 'Event types to receive: `*` (every type), a prefix wildcard such as `card.*` (every type of the prefix, '
  + `including types added later) or an exact type. The event catalogue (${EVENT_CATALOGUE_PATH}) lists what emits each type.`

/**
 * The request field: an unknown item is refused as invalid_parameter naming it (`enabled_events[i]`) with a message
 * pointing at the catalogue page under `baseUrl` (`x-refusals` for a bare prefix such as `card`, `x-refusal` otherwise).
 */
function enabledEventsInput(baseUrl: string) {
  return Type.Array(subscriptionForm({ 'x-refusals': barePrefixRefusals(baseUrl), 'x-refusal': subscriptionRefusalTemplate(baseUrl) }), {
    minItems: 1, maxItems: 100, description: `${ENABLED_EVENTS} Duplicates are dropped.`,
  })
}
const Description = Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])
const Status = Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])

export const WebhookEndpoint = Type.Object({
  id: Type.String({ description: 'whe_ id' }),
  object: Type.Literal('webhook_endpoint'),
  url: Type.String(),
  description: Description,
  enabled_events: Type.Array(subscriptionForm(), { description: ENABLED_EVENTS }),
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

/** The create and update bodies; built per application, as their refusals name the catalogue page under its BASE_URL. */
export function webhookEndpointRequests(baseUrl: string) {
  const enabledEvents = enabledEventsInput(baseUrl)
  return {
    create: Type.Object({
      url: Url,
      enabled_events: enabledEvents,
      description: Type.Optional(Description),
    }, { ...strict, title: 'WebhookEndpointCreateRequest' }),
    update: Type.Object({
      url: Type.Optional(Url),
      enabled_events: Type.Optional(enabledEvents),
      description: Type.Optional(Description),
      status: Type.Optional(Status),
    }, { ...strict, title: 'WebhookEndpointUpdateRequest' }),
  }
}

type Requests = ReturnType<typeof webhookEndpointRequests>
export type WebhookEndpointCreateBody = Static<Requests['create']>
export type WebhookEndpointUpdateBody = Static<Requests['update']>

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
