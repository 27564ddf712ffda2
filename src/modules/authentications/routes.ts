import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import type { CapabilityRule } from '../../http/capability.js'
import { NoBody } from '../../http/schema-types.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import {
  Authentication,
  AuthenticationIdParams,
  AuthenticationListQuery,
  SimulateAuthentication,
} from './schemas.js'
import {
  answerAuthentication,
  authenticationProgramOf,
  listAuthentications,
  retrieveAuthentication,
  simulateAuthentication,
} from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['3-D Secure']
const RELEASE_NOTE =
  'The authentications:read and authentications:write scopes are issued only where the deployment enables the ' +
  'three_d_secure release (SVC_RELEASES); elsewhere the token endpoint refuses them with invalid_scope.'

/** 3-D Secure out-of-band authentications: reads and answers by the caller; sandbox challenges from the simulator. */
export function registerAuthentications(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const capability: CapabilityRule = {
    name: 'three_d_secure',
    programOf: (req) => authenticationProgramOf(deps, req),
  }

  app.get(
    '/v1/authentications',
    {
      config: { scope: 'authentications:read' },
      schema: {
        tags,
        summary: 'List 3-D Secure authentications, most recently created first',
        description: `Filters: card_id, status. Challenges past their five minutes are listed as expired. ${RELEASE_NOTE}`,
        querystring: AuthenticationListQuery,
        response: { 200: ListEnvelope(Authentication, 'Authentication') },
      },
    },
    async (req) => {
      const { card_id, status, ...page } = req.query
      return listAuthentications(deps, req.ctx, { card_id, status }, page as PageParams)
    },
  )

  app.get(
    '/v1/authentications/:authentication_id',
    {
      config: { scope: 'authentications:read', capability, errors: ['authentication_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve a 3-D Secure authentication',
        description: `A pending challenge reads as expired from the moment its five minutes have passed. ${RELEASE_NOTE}`,
        params: AuthenticationIdParams,
        response: { 200: Authentication },
      },
    },
    async (req) => retrieveAuthentication(deps, req.ctx, req.params.authentication_id),
  )

  const answers = [
    ['approve', 'approved'],
    ['decline', 'declined'],
  ] as const
  for (const [op, status] of answers) {
    app.post(
      `/v1/authentications/:authentication_id/${op}`,
      {
        config: {
          scope: 'authentications:write',
          capability,
          errors: [
            'authentication_not_found',
            'authentication_invalid_state',
            ...(op === 'approve' ? ['card_closed' as const] : []),
          ],
        },
        schema: {
          tags,
          summary: `${op === 'approve' ? 'Approve' : 'Decline'} a pending authentication (pending → ${status})`,
          description:
            "The cardholder's answer, given in your application while the merchant checkout waits. Only a pending challenge " +
            'within its five minutes can be answered, once; otherwise 422 authentication_invalid_state. ' +
            (op === 'approve'
              ? 'A challenge on a card closed since cannot be approved (422 card_closed). '
              : '') +
            'Emits authentication.updated. ' +
            RELEASE_NOTE,
          params: AuthenticationIdParams,
          body: NoBody,
          response: { 200: Authentication },
        },
      },
      async (req) =>
        answerAuthentication(unitOf(req, deps), req.ctx, req.params.authentication_id, status),
    )
  }

  app.post(
    '/v1/simulate/authentications',
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
        summary: 'Start an out-of-band 3-D Secure challenge (sandbox only)',
        description:
          "What a merchant checkout does when the card's access control server asks for an out-of-band challenge: the authentication " +
          'is created `pending` (authentication.created) and expires five minutes later unless approved or declined. Only an active card ' +
          'is challenged (card_not_provisioned, card_closed, card_invalid_state otherwise); a program whose processor has no 3-D Secure ' +
          'simulator (sim_basic) answers 422 operation_unsupported. Needs cards:write, not the authentications scopes.',
        body: SimulateAuthentication,
        response: { 201: Authentication },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await simulateAuthentication(unitOf(req, deps), req.ctx, req.body)),
  )
}
