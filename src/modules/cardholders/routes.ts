import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import {
  Cardholder,
  CardholderCreateRequest,
  CardholderListQuery,
  CardholderParams,
  CardholderUpdateRequest,
  CardsPageQuery,
} from './schemas.js'
import {
  createCardholder,
  listCardholderCards,
  listCardholders,
  retrieveCardholder,
  updateCardholder,
} from './service.js'
import { unitOf } from '../../http/idempotency.js'

const CardItem = Type.Unknown({
  description: 'A Card (masked), as returned by GET /v1/cards/{card_id}.',
})

export function registerCardholders(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Cardholders']

  app.post(
    '/v1/cardholders',
    {
      config: { scope: 'cardholders:write', errors: ['cardholder_already_exists'] },
      schema: {
        tags,
        summary: 'Create a cardholder',
        description:
          'Individuals only. Email (case-insensitive) and phone number are unique per organization and environment. ' +
          'kyc_status starts `pending` when every program of the organization in this environment starts verification itself, otherwise `not_started`. ' +
          'Emits cardholder.created.',
        body: CardholderCreateRequest,
        response: { 201: Cardholder },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createCardholder(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/cardholders',
    {
      config: { scope: 'cardholders:read' },
      schema: {
        tags,
        summary: 'List cardholders, most recently created first',
        querystring: CardholderListQuery,
        response: { 200: ListEnvelope(Cardholder, 'Cardholder') },
      },
    },
    async (req) => listCardholders(deps, req.ctx, req.query),
  )

  app.get(
    '/v1/cardholders/:cardholder_id',
    {
      config: { scope: 'cardholders:read', errors: ['cardholder_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve a cardholder with its current verification state',
        params: CardholderParams,
        response: { 200: Cardholder },
      },
    },
    async (req) => retrieveCardholder(deps, req.ctx, req.params.cardholder_id),
  )

  app.patch(
    '/v1/cardholders/:cardholder_id',
    {
      config: {
        scope: 'cardholders:write',
        errors: [
          'cardholder_not_found',
          'cardholder_already_exists',
          'address_change_requires_kyc',
        ],
      },
      schema: {
        tags,
        summary: 'Update a cardholder',
        description:
          'Only supplied fields change. On programs with address_change_requires_kyc (the cardholder has an account there) ' +
          'an address change is refused with address_change_requires_kyc: report a KYC attestation carrying the address instead. Emits cardholder.updated when something changed.',
        params: CardholderParams,
        body: CardholderUpdateRequest,
        response: { 200: Cardholder },
      },
    },
    async (req) => updateCardholder(unitOf(req, deps), req.ctx, req.params.cardholder_id, req.body),
  )

  app.get(
    '/v1/cardholders/:cardholder_id/cards',
    {
      config: { scope: 'cards:read', errors: ['cardholder_not_found'] },
      schema: {
        tags,
        summary: 'List every card of the cardholder across all its accounts',
        params: CardholderParams,
        querystring: CardsPageQuery,
        response: { 200: ListEnvelope(CardItem, 'CardholderCard') },
      },
    },
    async (req) => listCardholderCards(deps, req.ctx, req.params.cardholder_id, req.query),
  )
}
