import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, PageQuery } from '../../http/pagination.js'
import { registerFxRateRoutes } from '../../processors/fx-routes.js'
import { Program } from './schemas.js'
import { listPrograms } from './service.js'

export function registerPrograms(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.get(
    '/v1/programs',
    {
      schema: {
        tags: ['Programs'],
        summary: 'List the programs of your organization in this environment',
        description: 'Needs only a valid token, no scope. Stable order (oldest first).',
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: ListEnvelope(Program, 'Program') },
      },
    },
    async (req) => listPrograms(deps, req.ctx, req.query),
  )

  // The rates programs' cards convert foreign spends at (the sandbox rate table, and pinning one in the sandbox).
  registerFxRateRoutes(base, deps)
}
