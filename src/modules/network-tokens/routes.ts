import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import type { CapabilityRule } from '../../http/capability.js'
import type { ErrorCode } from '../../http/errors.js'
import { NoBody } from '../../http/schema-types.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import {
  NetworkToken,
  NetworkTokenIdParams,
  NetworkTokenListQuery,
  SimulateNetworkToken,
} from './schemas.js'
import { listTokens, moveToken, provisionToken, retrieveToken, tokenProgramOf } from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Network tokens']
const MOVE_ERRORS: ErrorCode[] = ['token_not_found', 'token_invalid_state', 'token_deleted']

/** Network tokens: reads and the caller's suspend/resume/delete; sandbox provisioning through a wallet. */
export function registerNetworkTokens(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const capability: CapabilityRule = {
    name: 'network_tokens',
    programOf: (req) => tokenProgramOf(deps, req),
  }

  app.get(
    '/v1/network_tokens',
    {
      config: { scope: 'cards:read' },
      schema: {
        tags,
        summary: 'List network tokens, most recently created first',
        description: 'Filters: card_id, status, wallet.',
        querystring: NetworkTokenListQuery,
        response: { 200: ListEnvelope(NetworkToken, 'NetworkToken') },
      },
    },
    async (req) => {
      const { card_id, status, wallet, ...page } = req.query
      return listTokens(deps, req.ctx, { card_id, status, wallet }, page as PageParams)
    },
  )

  app.get(
    '/v1/network_tokens/:network_token_id',
    {
      config: { scope: 'cards:read', capability, errors: ['token_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve a network token',
        params: NetworkTokenIdParams,
        response: { 200: NetworkToken },
      },
    },
    async (req) => retrieveToken(deps, req.ctx, req.params.network_token_id),
  )

  const moves = [
    [
      'suspend',
      'Suspend a network token (active → suspended)',
      'Authorizations through a suspended token decline with token_inactive.',
    ],
    ['resume', 'Resume a network token (suspended → active)', 'The token authorizes again.'],
    [
      'delete',
      'Delete a network token (terminal)',
      'From requested, active or suspended; a deleted token answers token_deleted to every later move.',
    ],
  ] as const
  for (const [op, summary, text] of moves) {
    app.post(
      `/v1/network_tokens/:network_token_id/${op}`,
      {
        config: { scope: 'cards:write', capability, errors: MOVE_ERRORS },
        schema: {
          tags,
          summary,
          description: `${text} Other moves answer token_invalid_state; any move on a deleted token answers token_deleted. Emits network_token.updated.`,
          params: NetworkTokenIdParams,
          body: NoBody,
          response: { 200: NetworkToken },
        },
      },
      async (req) => moveToken(unitOf(req, deps), req.ctx, req.params.network_token_id, op),
    )
  }

  app.post(
    '/v1/simulate/network_tokens',
    {
      config: {
        simulator: true,
        scope: 'cards:write',
        errors: [
          'card_not_found',
          'card_not_provisioned',
          'card_closed',
          'card_invalid_state',
          'operation_unsupported',
          'program_not_provisioned',
        ],
      },
      schema: {
        tags: ['Simulator'],
        summary: 'Provision a card into a wallet (sandbox only)',
        description:
          'What a wallet does when a cardholder adds the card: the token is created `requested` (network_token.created) and the issuer ' +
          'approves it at once, so it answers `active` (network_token.updated). With `activate: false` it stays `requested` until ' +
          '/v1/simulate/network_tokens/{id}/activate. Only an active card can be tokenized (card_not_provisioned, card_closed, ' +
          'card_invalid_state otherwise); a program whose processor has no token simulator (sim_basic) answers 422 operation_unsupported.',
        body: SimulateNetworkToken,
        response: { 201: NetworkToken },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await provisionToken(unitOf(req, deps), req.ctx, req.body)),
  )

  app.post(
    '/v1/simulate/network_tokens/:network_token_id/activate',
    {
      config: { simulator: true, scope: 'cards:write', errors: MOVE_ERRORS },
      schema: {
        tags: ['Simulator'],
        summary: "Complete a requested token's provisioning (sandbox only)",
        description:
          'The issuer approves a token left `requested` (requested → active; otherwise token_invalid_state, or token_deleted). ' +
          'Emits network_token.updated.',
        params: NetworkTokenIdParams,
        body: NoBody,
        response: { 200: NetworkToken },
      },
    },
    async (req) => moveToken(unitOf(req, deps), req.ctx, req.params.network_token_id, 'activate'),
  )
}
