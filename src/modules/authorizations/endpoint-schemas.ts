import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'

const strict = { additionalProperties: false }

export const TIMEOUT_MS_DEFAULT = 1500

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    'Where authorization requests are POSTed: the rules of webhook endpoint URLs (HTTPS on a publicly resolvable host, ' +
    'invalid_webhook_url otherwise; a local `npm start` sandbox also accepts http:// to your own machine)',
})
const TimeoutMs = Type.Integer({
  minimum: 100,
  maximum: 2000,
  description: 'How long the service waits for the answer, 100–2000 ms (default 1500)',
})
const StandIn = Type.Union([Type.Literal('decline'), Type.Literal('approve')], {
  description:
    'What decides when the endpoint does not answer usably (timeout, non-2xx, bad JSON) or its circuit is open: `decline` ' +
    "(decline_reason integrator_unavailable, the default) or `approve` (the service's own rules, which already approved)",
})

export const AuthorizationEndpointPut = Type.Object(
  {
    url: Url,
    timeout_ms: Type.Optional(TimeoutMs),
    stand_in: Type.Optional(StandIn),
  },
  {
    ...strict,
    title: 'AuthorizationEndpointPutRequest',
    examples: [
      {
        url: 'https://issuing.example.com/svc/authorizations',
        timeout_ms: 1200,
        stand_in: 'decline',
      },
      { url: 'http://127.0.0.1:4343/authorize' },
    ],
  },
)
export type AuthorizationEndpointPutBody = Static<typeof AuthorizationEndpointPut>

export const AuthorizationEndpoint = Type.Object(
  {
    id: Type.String({ description: 'aep_ id (a new one after DELETE and PUT)' }),
    object: Type.Literal('authorization_endpoint'),
    url: Type.String(),
    timeout_ms: Type.Integer(),
    stand_in: Type.Union([Type.Literal('decline'), Type.Literal('approve')]),
    status: Type.Union([Type.Literal('enabled'), Type.Literal('circuit_open')], {
      description:
        '`circuit_open`: after 5 consecutive stand-ins the endpoint is skipped for 30 s (the stand-in answers at once), then ' +
        'tried again. The breaker is kept per service process: this is what the process that answered sees',
    }),
    secret: Type.Optional(
      Type.String({
        description:
          'whsec_ signing secret: returned only when the endpoint is created and by rotate_secret',
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'AuthorizationEndpoint',
    examples: [
      {
        id: 'aep_01JD3R5M7N9P1Q3R5S7T9V1W3X',
        object: 'authorization_endpoint',
        url: 'https://issuing.example.com/svc/authorizations',
        timeout_ms: 1200,
        stand_in: 'decline',
        status: 'enabled',
        created_at: '2026-11-01T12:00:00.000Z',
        updated_at: '2026-11-01T12:00:00.000Z',
      },
    ],
  },
)
export type AuthorizationEndpointView = Static<typeof AuthorizationEndpoint>

export const AuthorizationEndpointDeleted = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('authorization_endpoint'),
    deleted: Type.Literal(true),
  },
  {
    title: 'AuthorizationEndpointDeleted',
    examples: [
      { id: 'aep_01JD3R5M7N9P1Q3R5S7T9V1W3X', object: 'authorization_endpoint', deleted: true },
    ],
  },
)

export const AuthorizationEndpointAttempt = Type.Object(
  {
    id: Type.String({ description: 'aea_ id' }),
    object: Type.Literal('authorization_endpoint_attempt'),
    authorization_id: Type.String({
      description: 'The authorization asked about (auth_); a declined one keeps its id',
    }),
    request_type: Type.Union([Type.Literal('authorization'), Type.Literal('increment')]),
    request_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The req_ id of the API call that caused it (its Request-Id)',
    }),
    url: Type.String({ description: 'The URL called' }),
    response_status: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'HTTP status answered; null when none came (timeout, failed connection, open circuit)',
    }),
    latency_ms: Type.Integer({
      minimum: 0,
      description:
        'Until the answer or the timeout; 0 when the circuit was open and nothing was sent',
    }),
    outcome: Type.Union(
      [
        Type.Literal('approved'),
        Type.Literal('partially_approved'),
        Type.Literal('declined'),
        Type.Literal('stand_in'),
      ],
      {
        description:
          "What the endpoint answered; `stand_in`: nothing usable, the endpoint's stand_in decided",
      },
    ),
    approved_amount: Type.Union([Type.Integer(), Type.Null()], {
      description:
        'The amount the endpoint approved (the requested one, or less for a partial approval); null otherwise',
    }),
    stand_in_reason: Type.Union([
      Type.Literal('timeout'),
      Type.Literal('error'),
      Type.Literal('invalid_response'),
      Type.Null(),
    ]),
    error: Type.Union([Type.String(), Type.Null()], {
      description:
        'Why the answer was not usable (`HTTP 500`, `ETIMEDOUT: …`, `circuit open: …`, …)',
    }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'AuthorizationEndpointAttempt',
    examples: [
      {
        id: 'aea_01JD3R5M7N9P1Q3R5S7T9V1W3Y',
        object: 'authorization_endpoint_attempt',
        authorization_id: 'auth_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        request_type: 'authorization',
        request_id: 'req_01JD3Q7Y6X5W4V3T2S1R0Q9P8P',
        url: 'https://issuing.example.com/svc/authorizations',
        response_status: 200,
        latency_ms: 84,
        outcome: 'partially_approved',
        approved_amount: 2000,
        stand_in_reason: null,
        error: null,
        created_at: '2026-11-02T10:00:00.084Z',
      },
    ],
  },
)
export type AuthorizationEndpointAttemptView = Static<typeof AuthorizationEndpointAttempt>

export const AttemptListQuery = Type.Object(PageQuery, strict)
export const EmptyBody = Type.Object({}, strict)
