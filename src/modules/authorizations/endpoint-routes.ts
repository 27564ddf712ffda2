import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import {
  AttemptListQuery,
  AuthorizationEndpoint,
  AuthorizationEndpointAttempt,
  AuthorizationEndpointDeleted,
  AuthorizationEndpointPut,
  EmptyBody,
} from './endpoint-schemas.js'
import {
  deleteEndpoint,
  getEndpoint,
  listAttempts,
  putEndpoint,
  rotateEndpointSecret,
} from './endpoint-service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Authorization endpoint']
const scope = 'webhooks:write'

const CALL =
  "For each authorization, and each increment, that the service's own rules approve, the service POSTs a signed " +
  '`authorization.request` (the `Svc-Signature` of webhooks, over the raw body) carrying in `data.object` the authorization as it ' +
  'would be written (status pending, approved true, no hold yet) and in `data.request` what is asked (`type`, `amount`), and waits ' +
  'at most `timeout_ms`. Answer 2xx with `{"approved": true}`, `{"approved": true, "amount": n}` (partial approval, 0 < n ≤ the ' +
  'amount asked; the hold is n) or `{"approved": false}` (decline_reason integrator_declined). Anything else (timeout, non-2xx, not ' +
  "such JSON) is the stand-in: `approve` approves on the service's rules, `decline` declines with integrator_unavailable. Declines by " +
  "the service's rules are never sent. After 5 consecutive stand-ins the endpoint is skipped for 30 s (per service process). " +
  'Each authorization records who decided in `decision`. Guide: /docs/guides/authorization-endpoint.'

/** /v1/authorization_endpoint: the organization's endpoint that decides authorizations, per environment, and its attempt log. */
export function registerAuthorizationEndpoint(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.put(
    '/v1/authorization_endpoint',
    {
      schema: {
        tags,
        summary: 'Register or change the authorization endpoint',
        description:
          `Creates the environment's endpoint, answering its \`whsec_\` signing secret (shown only here and by rotate_secret), or ` +
          'changes the url, timeout_ms (100–2000, default 1500) and stand_in (default `decline`) of the existing one, keeping its secret ' +
          '(not shown) and every setting the body leaves out (a PUT of a new url keeps the stand_in and timeout_ms set before). ' +
          'The url follows the rules of webhook endpoint URLs. ' +
          CALL,
        body: AuthorizationEndpointPut,
        response: { 200: AuthorizationEndpoint },
      },
      config: { scope, errors: ['invalid_webhook_url'] },
    },
    async (req) => putEndpoint(deps, req.ctx, req.body),
  )

  app.get(
    '/v1/authorization_endpoint',
    {
      schema: {
        tags,
        summary: 'Retrieve the authorization endpoint (without its secret)',
        response: { 200: AuthorizationEndpoint },
      },
      config: { scope, errors: ['authorization_endpoint_not_found'] },
    },
    async (req) => getEndpoint(deps, req.ctx),
  )

  app.delete(
    '/v1/authorization_endpoint',
    {
      schema: {
        tags,
        summary: 'Delete the authorization endpoint',
        description:
          'The service decides authorizations alone again. The attempt log is kept (30 days).',
        response: { 200: AuthorizationEndpointDeleted },
      },
      config: { scope, errors: ['authorization_endpoint_not_found'] },
    },
    async (req) => deleteEndpoint(deps, req.ctx),
  )

  app.post(
    '/v1/authorization_endpoint/rotate_secret',
    {
      schema: {
        tags,
        summary: 'Rotate the signing secret',
        description:
          'Answers the endpoint with its new `secret`. For 24 hours both secrets sign every request (two `v1=` values).',
        body: EmptyBody,
        response: { 200: AuthorizationEndpoint },
      },
      config: { scope, errors: ['authorization_endpoint_not_found'] },
    },
    async (req) => rotateEndpointSecret(unitOf(req, deps), req.ctx),
  )

  app.get(
    '/v1/authorization_endpoint/attempts',
    {
      schema: {
        tags,
        summary: 'The attempt log, newest first',
        description:
          'One entry per authorization request the service decided to send (or skipped while the circuit was open): the ' +
          'authorization, the API request that caused it, the HTTP status answered, the latency, the outcome and the stand-in reason. ' +
          'Written beside the decision (not in its batch), before the simulator answers. Kept 30 days.',
        querystring: AttemptListQuery,
        response: {
          200: ListEnvelope(AuthorizationEndpointAttempt, 'AuthorizationEndpointAttempt'),
        },
      },
      config: { scope },
    },
    async (req) => listAttempts(deps, req.ctx, req.query as PageParams),
  )
}
