import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import {
  ClientParams,
  EmptyBody,
  OAuthClient,
  OAuthClientCreateRequest,
  OAuthClientListQuery,
  OAuthClientUpdateRequest,
} from './client-schemas.js'
import {
  createOwnClient,
  getOwnClient,
  listOwnClients,
  revokeOwnClient,
  updateOwnClient,
} from './own-clients.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['OAuth clients']
const scope = 'clients:write'

const KEYS =
  'The JWK Set holds 1 to 3 public keys (EC P-256 for ES256, or RSA of at least 2048 bits with exponent 65537 for RS256), ' +
  'each with a distinct `kid` when there are several; private members are refused (`invalid_parameter`), a key that does not ' +
  'parse or a weak RSA key is `invalid_public_key`. Only public keys are ever stored or returned.'
const GRANT =
  '`scopes` may name only scopes your own client holds and this token was given (else `400 invalid_parameter` naming `scopes`).'

/**
 * /v1/oauth_clients (scope clients:write, never granted by default): an organization manages the OAuth clients of its
 * token's environment with the operator's rules; it grants only scopes it holds.
 */
export function registerClientRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/oauth_clients',
    {
      schema: {
        tags,
        summary: 'Register an OAuth client',
        description:
          `A new client of your organization in the token's environment. ${KEYS} ${GRANT} Omitted, \`scopes\` are the ` +
          'default scopes you hold (never `cards:secrets` nor `clients:write`). `ip_allowlist` (addresses or CIDR ranges) narrows ' +
          'the organization network policy for this client.',
        body: OAuthClientCreateRequest,
        response: { 201: OAuthClient },
      },
      config: { scope, errors: ['invalid_public_key'] },
    },
    async (req, reply) =>
      reply.code(201).send(await createOwnClient(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/oauth_clients',
    {
      schema: {
        tags,
        summary: "List your organization's OAuth clients of this environment, newest first",
        querystring: OAuthClientListQuery,
        response: { 200: ListEnvelope(OAuthClient, 'OAuthClient') },
      },
      config: { scope },
    },
    async (req) => listOwnClients(deps, req.ctx, req.query),
  )

  app.get(
    '/v1/oauth_clients/:oauth_client_id',
    {
      schema: {
        tags,
        summary: 'Retrieve an OAuth client',
        params: ClientParams,
        response: { 200: OAuthClient },
      },
      config: { scope, errors: ['client_not_found'] },
    },
    async (req) => getOwnClient(deps, req.ctx, req.params.oauth_client_id),
  )

  app.patch(
    '/v1/oauth_clients/:oauth_client_id',
    {
      schema: {
        tags,
        summary: 'Change an OAuth client: label, scopes, keys, allowlist',
        description:
          `Only the fields given change. Scope and key changes apply to the next token request; an allowlist change applies at ` +
          `once, to tokens already issued too. Rotate a key by adding the new one beside the old, switching, then removing the old. ${KEYS} ` +
          `${GRANT} A client holding a scope you do not hold cannot be changed (\`403 insufficient_scope\`), nor can a revoked one ` +
          '(`400 invalid_parameter`).',
        params: ClientParams,
        body: OAuthClientUpdateRequest,
        response: { 200: OAuthClient },
      },
      config: { scope, errors: ['client_not_found', 'invalid_public_key'] },
    },
    async (req) =>
      updateOwnClient(unitOf(req, deps), req.ctx, req.params.oauth_client_id, req.body),
  )

  app.post(
    '/v1/oauth_clients/:oauth_client_id/revoke',
    {
      schema: {
        tags,
        summary: 'Revoke an OAuth client: immediate and final',
        description:
          'Its tokens are refused from the next request (`401 invalid_access_token`) and its token requests from now on ' +
          '(`401 invalid_client`); it cannot be changed or re-enabled. Revoking a revoked client answers it again. You may revoke the ' +
          'client whose token makes the call: the answer still arrives, then that token is refused too. A client holding a scope you do ' +
          'not hold cannot be revoked by you (`403 insufficient_scope`).',
        params: ClientParams,
        body: EmptyBody,
        response: { 200: OAuthClient },
      },
      config: { scope, errors: ['client_not_found'] },
    },
    async (req) => revokeOwnClient(unitOf(req, deps), req.ctx, req.params.oauth_client_id),
  )
}
