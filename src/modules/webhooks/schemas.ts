import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import {
  barePrefixRefusals,
  EVENT_CATALOGUE_PATH,
  SUBSCRIPTION_FORMS,
  subscriptionRefusalTemplate,
} from '../events/index.js'

const strict = { additionalProperties: false }

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'HTTPS URL on a publicly resolvable host (invalid_webhook_url otherwise); a local `npm start` sandbox also accepts http:// to your own machine',
})

/** One `enabled_events` item: `*`, a prefix wildcard (`card.*`) or an exact type, as the event catalogue publishes them. */
const subscriptionForm = (options: Record<string, unknown> = {}) =>
  Type.Enum([...SUBSCRIPTION_FORMS], { type: 'string', ...options })

const ENABLED_EVENTS =
  'Event types to receive: `*` (every type), a prefix wildcard such as `card.*` (every type of the prefix, ' +
  `including types added later) or an exact type. The event catalogue (${EVENT_CATALOGUE_PATH}) lists what emits each type.`

/**
 * The request field: an unknown item is refused as invalid_parameter naming it (`enabled_events[i]`) with a message
 * pointing at the catalogue page under `baseUrl` (`x-refusals` for a bare prefix such as `card`, `x-refusal` otherwise).
 */
function enabledEventsInput(baseUrl: string) {
  return Type.Array(
    subscriptionForm({
      'x-refusals': barePrefixRefusals(baseUrl),
      'x-refusal': subscriptionRefusalTemplate(baseUrl),
    }),
    {
      minItems: 1,
      maxItems: 100,
      description: `${ENABLED_EVENTS} Duplicates are dropped.`,
    },
  )
}
const Description = Type.Union([Type.String({ maxLength: 5000 }), Type.Null()])
const Status = Type.Union([Type.Literal('enabled'), Type.Literal('disabled')])

export const WebhookEndpoint = Type.Object(
  {
    id: Type.String({ description: 'whe_ id' }),
    object: Type.Literal('webhook_endpoint'),
    url: Type.String(),
    description: Description,
    enabled_events: Type.Array(subscriptionForm(), { description: ENABLED_EVENTS }),
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], {
      description:
        'disabled: nothing is delivered (set by you, or automatically after 72 hours of continuous failure)',
    }),
    failing_since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'Start of the current run of failed deliveries (the first failure since the last success); null while healthy. ' +
        'After 72 hours of failures without a success the endpoint is disabled.',
    }),
    disabled_reason: Type.Union([Type.Literal('failing'), Type.Literal('manual'), Type.Null()], {
      description:
        'Why a disabled endpoint is disabled: `failing` (72 hours of failed deliveries, announced by `webhook_endpoint.disabled`) ' +
        'or `manual` (PATCH status `disabled`); null while enabled.',
    }),
    api_version: Type.String({ description: 'Version events are serialized with' }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    secret: Type.Optional(
      Type.String({
        description: 'whsec_ signing secret: returned only by create and rotate_secret',
      }),
    ),
  },
  {
    title: 'WebhookEndpoint',
    // As retrieved: `secret` appears only in the answers of create and rotate_secret.
    examples: [
      {
        id: 'whe_01JD3R5M7N9P1Q3R5S7T9V1W3X',
        object: 'webhook_endpoint',
        url: 'https://hooks.example.com/svc',
        description: 'Production event receiver',
        enabled_events: ['cardholder.created', 'card.issued', 'authorization.created'],
        status: 'enabled',
        failing_since: null,
        disabled_reason: null,
        api_version: '2026-11-01',
        created_at: '2026-11-01T12:00:00.000Z',
        updated_at: '2026-11-01T12:00:00.000Z',
      },
    ],
  },
)

/** The create and update bodies; built per application, as their refusals name the catalogue page under its BASE_URL. */
export function webhookEndpointRequests(baseUrl: string) {
  const enabledEvents = enabledEventsInput(baseUrl)
  return {
    create: Type.Object(
      {
        url: Url,
        enabled_events: enabledEvents,
        description: Type.Optional(Description),
      },
      { ...strict, title: 'WebhookEndpointCreateRequest' },
    ),
    update: Type.Object(
      {
        url: Type.Optional(Url),
        enabled_events: Type.Optional(enabledEvents),
        description: Type.Optional(Description),
        status: Type.Optional(Status),
      },
      { ...strict, title: 'WebhookEndpointUpdateRequest' },
    ),
  }
}

type Requests = ReturnType<typeof webhookEndpointRequests>
export type WebhookEndpointCreateBody = Static<Requests['create']>
export type WebhookEndpointUpdateBody = Static<Requests['update']>

export const WebhookEndpointDeleted = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('webhook_endpoint'),
    deleted: Type.Literal(true),
  },
  {
    title: 'WebhookEndpointDeleted',
    examples: [{ id: 'whe_01JD3R5M7N9P1Q3R5S7T9V1W3X', object: 'webhook_endpoint', deleted: true }],
  },
)

export const EndpointParams = Type.Object({ webhook_endpoint_id: Type.String({ maxLength: 200 }) })
export const EndpointListQuery = Type.Object(PageQuery, strict)
export const EmptyBody = Type.Object({}, strict)

const Timestamp = (description?: string) =>
  Type.String({ format: 'date-time', ...(description ? { description } : {}) })
const NullableTimestamp = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description })

export const WebhookDeliveryAttempt = Type.Object(
  {
    attempt: Type.Integer({
      minimum: 1,
      description: 'The Svc-Delivery-Attempt number it was sent with (replays continue the count)',
    }),
    started_at: Timestamp('When the POST was started'),
    duration_ms: Type.Integer({
      minimum: 0,
      description: 'Until the answer, the failure or the 10-second timeout',
    }),
    response_status: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'HTTP status the endpoint answered; null when none came (timeout, refused connection, TLS failure, refused URL)',
    }),
    error: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the attempt failed (`HTTP 500`, `ECONNREFUSED: …`, `ETIMEDOUT: no response within 10 s`, …); null when it was delivered',
    }),
    response_body: Type.Union([Type.String(), Type.Null()], {
      description:
        'The first 4 KiB of the body your endpoint answered (as UTF-8), to see why it refused; null when it answered none or did not answer',
    }),
  },
  {
    title: 'WebhookDeliveryAttempt',
    examples: [
      {
        attempt: 1,
        started_at: '2026-11-01T12:00:00.120Z',
        duration_ms: 84,
        response_status: 200,
        error: null,
        response_body: '{"received":true}',
      },
    ],
  },
)

export const WebhookDelivery = Type.Object(
  {
    id: Type.String({
      description: 'whd_ id, stable for this event and endpoint across retries and replays',
    }),
    object: Type.Literal('webhook_delivery'),
    webhook_endpoint_id: Type.String({ description: 'whe_ id' }),
    event_id: Type.String({ description: 'evt_ id of the event delivered' }),
    event_type: Type.String({ description: 'Its type (the event catalogue lists them)' }),
    status: Type.Union(
      [Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')],
      {
        description:
          '`pending`: queued or waiting for its next retry; `delivered`: the endpoint answered 2xx; `failed`: given up after 72 hours ' +
          'of failures, or ended because the endpoint was disabled or deleted before it went out. A replay makes it `pending` again.',
      },
    ),
    attempts: Type.Array(WebhookDeliveryAttempt, {
      description: 'Every attempt made, oldest first',
    }),
    next_attempt_at: NullableTimestamp('When a pending delivery is next tried; null otherwise'),
    delivered_at: NullableTimestamp(
      'When the last successful attempt was answered; null until one is',
    ),
    created_at: Timestamp('When the delivery was first queued'),
    updated_at: Timestamp(),
  },
  {
    title: 'WebhookDelivery',
    examples: [
      {
        id: 'whd_01JD3R2B4CA1B2C3D4E5F60718',
        object: 'webhook_delivery',
        webhook_endpoint_id: 'whe_01JD3R5M7N9P1Q3R5S7T9V1W3X',
        event_id: 'evt_01JD3R2B4C6D8E0F2G4H6J8K0M',
        event_type: 'cardholder.created',
        status: 'delivered',
        attempts: [
          {
            attempt: 1,
            started_at: '2026-11-01T12:00:00.120Z',
            duration_ms: 10004,
            response_status: null,
            error: 'ETIMEDOUT: no response within 10 s',
            response_body: null,
          },
          {
            attempt: 2,
            started_at: '2026-11-01T12:01:10.000Z',
            duration_ms: 84,
            response_status: 200,
            error: null,
            response_body: '{"received":true}',
          },
        ],
        next_attempt_at: null,
        delivered_at: '2026-11-01T12:01:10.084Z',
        created_at: '2026-11-01T12:00:00.000Z',
        updated_at: '2026-11-01T12:01:10.084Z',
      },
    ],
  },
)

export const DeliveryListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(
      Type.Union([Type.Literal('pending'), Type.Literal('delivered'), Type.Literal('failed')], {
        description: 'Only deliveries in this status',
      }),
    ),
    event_type: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 100,
        examples: ['card.*'],
        description:
          'Only deliveries of events of this type: an exact type, a prefix wildcard such as `card.*`, or `*` (no filter), as `GET /v1/events?type=` takes them. ' +
          'Not together with `status` (invalid_parameter): filter the log by one of them.',
      }),
    ),
  },
  strict,
)

export const Replay = Type.Object(
  {
    object: Type.Literal('replay'),
    queued: Type.Integer({
      minimum: 0,
      description:
        'Deliveries queued: each goes out shortly with the next Svc-Delivery-Attempt number of its (event, endpoint)',
    }),
    event_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The event replayed; null for an endpoint replay',
    }),
    webhook_endpoint_ids: Type.Array(Type.String(), {
      description: 'The endpoints the deliveries go to',
    }),
    since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description:
        'An endpoint replay: events created at or after this time; null for an event replay',
    }),
  },
  {
    title: 'Replay',
    examples: [
      {
        object: 'replay',
        queued: 1,
        event_id: 'evt_01JD3R2B4C6D8E0F2G4H6J8K0M',
        webhook_endpoint_ids: ['whe_01JD3R5M7N9P1Q3R5S7T9V1W3X'],
        since: null,
      },
    ],
  },
)

export const EventReplayRequest = Type.Object(
  {
    webhook_endpoint_id: Type.Optional(
      Type.String({
        maxLength: 200,
        description:
          'Only to this endpoint (enabled, of your environment); omitted: every enabled endpoint whose `enabled_events` takes the type',
      }),
    ),
  },
  { ...strict, title: 'EventReplayRequest' },
)

export const EndpointReplayRequest = Type.Object(
  {
    since: Type.String({
      format: 'date-time',
      description:
        'RFC 3339 timestamp, e.g. 2026-11-01T00:00:00Z, at most 30 days ago (event retention): every event created at or after it that the endpoint takes is sent again',
    }),
  },
  { ...strict, title: 'WebhookEndpointReplayRequest' },
)
