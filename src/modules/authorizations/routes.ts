import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import { registerAuthorizationEndpoint } from './endpoint-routes.js'
import { registerAuthorizationSimulatorRoutes } from './simulate-routes.js'
import { registerSpendLimits } from './spend-limits-routes.js'
import { Authorization, AuthorizationIdParams, AuthorizationListQuery } from './schemas.js'
import { listAuthorizations, retrieveAuthorization } from './service.js'

const tags = ['Authorizations']

/**
 * Authorizations: reads for the caller, the sandbox network that creates and moves them (simulate-routes), and the
 * endpoint that decides them (endpoint-routes).
 */
export function registerAuthorizations(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/authorizations',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags,
        summary: 'List authorizations, most recently created first',
        description:
          'Approved and declined authorizations of your cards. Filters: card_id, account_id, status.',
        querystring: AuthorizationListQuery,
        response: { 200: ListEnvelope(Authorization, 'Authorization') },
      },
    },
    async (req) => {
      const { card_id, account_id, status, ...page } = req.query
      return listAuthorizations(deps, req.ctx, { card_id, account_id, status }, page as PageParams)
    },
  )

  app.get(
    '/v1/authorizations/:authorization_id',
    {
      config: { scope: 'transactions:read', errors: ['authorization_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve an authorization',
        description:
          'Its status, what it holds and captured, the decline reason of a declined one, and every request (first and increments).',
        params: AuthorizationIdParams,
        response: { 200: Authorization },
      },
    },
    async (req) => retrieveAuthorization(deps, req.ctx, req.params.authorization_id),
  )

  registerAuthorizationSimulatorRoutes(base, deps)
  registerAuthorizationEndpoint(base, deps)
  registerSpendLimits(base, deps)
}
