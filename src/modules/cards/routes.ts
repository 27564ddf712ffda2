import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import type { ErrorCode } from '../../http/errors.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import { changeStatus } from './operations.js'
import { replaceCard } from './replacement.js'
import { registerRevealRoutes } from './reveal-routes.js'
import { registerCardSecretRoutes } from './secrets-routes.js'
import { registerCardSimulatorRoutes } from './simulate-routes.js'
import {
  Card,
  CardCreate,
  CardIdParams,
  CardListQuery,
  CardReplace,
  CardUpdate,
} from './schemas.js'
import { NoBody } from '../../http/schema-types.js'
import { createCard, listCards, retrieveCard, updateCard } from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Cards']
const STATE_ERRORS: ErrorCode[] = [
  'card_not_found',
  'card_not_provisioned',
  'card_closed',
  'card_invalid_state',
  'processor_unavailable',
  'processor_permission_denied',
]

const CREATE_ERRORS: ErrorCode[] = [
  'cardholder_not_found',
  'identity_document_required',
  'address_required',
  'kyc_not_approved',
  'kyc_identity_required',
  'account_not_found',
  'account_cardholder_mismatch',
  'account_not_provisioned',
  'unsupported_form_factor',
  'card_type_not_configured',
  'embossed_name_required',
  'delivery_address_required',
  'card_limit_reached',
  'spend_control_unsupported',
  'program_not_provisioned',
]

/**
 * Cards: issuance, reads, lifecycle moves, PIN and details (secrets-routes), hosted card details pages
 * (reveal-routes), sandbox issuing and shipping (simulate-routes).
 */
export function registerCards(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/cards',
    {
      config: { scope: 'cards:write', errors: CREATE_ERRORS },
      schema: {
        tags,
        summary: 'Issue a card',
        description:
          'Creates the card `pending`; the processor issues it asynchronously (event `card.issued`; physical cards are then ' +
          '`inactive` until activated, virtual ones `active`). Refusals are checked in this order: cardholder_not_found, ' +
          'identity_document_required, address_required, kyc_not_approved, kyc_identity_required, account_not_found, ' +
          'account_cardholder_mismatch, account_not_provisioned, unsupported_form_factor, card_type_not_configured, ' +
          'embossed_name_required, delivery_address_required, card_limit_reached, spend_control_unsupported. Emits card.created.',
        body: CardCreate,
        response: { 201: Card },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createCard(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/cards',
    {
      config: { scope: 'cards:read' },
      schema: {
        tags,
        summary: 'List cards, most recently created first',
        description: 'Filters: cardholder_id, account_id, status. Cards are masked (last4 only).',
        querystring: CardListQuery,
        response: { 200: ListEnvelope(Card, 'Card') },
      },
    },
    async (req) => {
      const { cardholder_id, account_id, status, ...page } = req.query
      return listCards(
        deps,
        req.ctx,
        '/v1/cards',
        { cardholder_id, account_id, status },
        page as PageParams,
      )
    },
  )

  app.get(
    '/v1/cards/:card_id',
    {
      config: { scope: 'cards:read', errors: ['card_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve a card (masked)',
        params: CardIdParams,
        response: { 200: Card },
      },
    },
    async (req) => retrieveCard(deps, req.ctx, req.params.card_id),
  )

  app.patch(
    '/v1/cards/:card_id',
    {
      config: {
        scope: 'cards:write',
        errors: ['card_not_found', 'card_closed', 'spend_control_unsupported'],
      },
      schema: {
        tags,
        summary: 'Update spending controls and metadata',
        description:
          'Supplied spending-control keys replace those keys; metadata keys merge (null or "" removes one). A closed card answers card_closed.',
        params: CardIdParams,
        body: CardUpdate,
        response: { 200: Card },
      },
    },
    async (req) => updateCard(unitOf(req, deps), req.ctx, req.params.card_id, req.body),
  )

  const moves = [
    [
      'activate',
      'Activate a physical card (inactive → active)',
      'card.activated; a replacement being activated also closes the card it replaces (card.closed)',
      ['card_already_activated'],
    ],
    ['freeze', 'Freeze a card (active → frozen)', 'card.frozen', []],
    ['unfreeze', 'Unfreeze a card (frozen → active)', 'card.unfrozen', []],
    ['close', 'Close a card (any issued status → closed, irreversible)', 'card.closed', []],
  ] as const
  for (const [op, summary, events, extra] of moves) {
    app.post(
      `/v1/cards/:card_id/${op}`,
      {
        config: { scope: 'cards:write', errors: [...STATE_ERRORS, ...extra] },
        schema: {
          tags,
          summary,
          description: `Emits ${events}.`,
          params: CardIdParams,
          body: NoBody,
          response: { 200: Card },
        },
      },
      async (req) => changeStatus(unitOf(req, deps), req.ctx, req.params.card_id, op),
    )
  }

  app.post(
    '/v1/cards/:card_id/replace',
    {
      config: { scope: 'cards:write', errors: [...STATE_ERRORS, 'card_limit_reached'] },
      schema: {
        tags,
        summary: 'Replace a card',
        description:
          'Answers 201 with the new card (`replacement_for` names the old one, which gets `replaced_by`). lost and stolen ' +
          'close the old card at once; damaged and expiring close it when the new card is activated. Emits card.replaced and card.created ' +
          '(and card.closed for lost or stolen).',
        params: CardIdParams,
        body: CardReplace,
        response: { 201: Card },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await replaceCard(unitOf(req, deps), req.ctx, req.params.card_id, req.body.reason)),
  )

  registerCardSecretRoutes(base, deps)
  registerRevealRoutes(base, deps)
  registerCardSimulatorRoutes(base, deps)
}
