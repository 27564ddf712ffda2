import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { issueNow } from './issuance.js'
import { shipCard } from './operations.js'
import { Card, CardIdParams, ShipRequest } from './schemas.js'
import { NoBody } from '../../http/schema-types.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Simulator']

/** Sandbox only (production answers the same 404 as an unknown path): issue a pending card now, ship a physical one. */
export function registerCardSimulatorRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/simulate/cards/:card_id/issue',
    {
      config: {
        simulator: true,
        scope: 'cards:write',
        errors: ['card_not_found', 'processor_unavailable', 'processor_permission_denied'],
      },
      schema: {
        tags,
        summary: 'Issue a pending card now',
        description:
          'Runs the issuance the background job would run after CARD_ISSUE_DELAY_MS: the processor issues the card and card.issued is emitted. ' +
          'A card that is already issued is answered unchanged.',
        params: CardIdParams,
        body: NoBody,
        response: { 200: Card },
      },
    },
    async (req) => issueNow(unitOf(req, deps), req.ctx, req.params.card_id),
  )

  app.post(
    '/v1/simulate/cards/:card_id/ship',
    {
      config: {
        simulator: true,
        scope: 'cards:write',
        errors: ['card_not_found', 'card_not_provisioned', 'card_closed', 'card_invalid_state'],
      },
      schema: {
        tags,
        summary: "Move a physical card's shipping forward",
        description:
          'pending → shipped → delivered (the next step, or the `status` named). Emits card.shipped with the new shipping status.',
        params: CardIdParams,
        body: ShipRequest,
        response: { 200: Card },
      },
    },
    async (req) => shipCard(unitOf(req, deps), req.ctx, req.params.card_id, req.body?.status),
  )
}
