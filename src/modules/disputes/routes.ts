import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import {
  Dispute,
  DisputeCreate,
  DisputeIdParams,
  DisputeListQuery,
  DisputeResolve,
} from './schemas.js'
import {
  createDispute,
  listDisputes,
  resolveDispute,
  retrieveDispute,
  withdrawDispute,
} from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Disputes']

/** Disputes of settled captures: open, read, withdraw; the sandbox network decides them (resolve). */
export function registerDisputes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/disputes',
    {
      config: {
        scope: 'transactions:write',
        errors: [
          'transaction_not_found',
          'transaction_not_refundable',
          'dispute_already_open',
          'refund_exceeds_original',
        ],
      },
      schema: {
        tags,
        summary: 'Dispute a settled capture',
        description:
          'Only a settled capture can be disputed (a pending capture, a refund or a transaction with nothing left answers ' +
          'transaction_not_refundable); one dispute per transaction may be open at a time (dispute_already_open); `amount` defaults to, ' +
          'and may not exceed, what is left: the amount minus refunds and disputes already won (refund_exceeds_original). The dispute ' +
          'starts `submitted` and moves to `under_review` when the network takes the case (about a second later). A won dispute credits ' +
          'the account (ledger entry `dispute_credit`). Emits dispute.created.',
        body: DisputeCreate,
        response: { 201: Dispute },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createDispute(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/disputes',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags,
        summary: 'List disputes, most recently created first',
        description: 'Filters: transaction_id, card_id, status.',
        querystring: DisputeListQuery,
        response: { 200: ListEnvelope(Dispute, 'Dispute') },
      },
    },
    async (req) => {
      const { transaction_id, card_id, status, ...page } = req.query
      return listDisputes(deps, req.ctx, { transaction_id, card_id, status }, page as PageParams)
    },
  )

  app.get(
    '/v1/disputes/:dispute_id',
    {
      config: { scope: 'transactions:read', errors: ['dispute_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve a dispute',
        params: DisputeIdParams,
        response: { 200: Dispute },
      },
    },
    async (req) => retrieveDispute(deps, req.ctx, req.params.dispute_id),
  )

  app.post(
    '/v1/disputes/:dispute_id/withdraw',
    {
      config: {
        scope: 'transactions:write',
        errors: ['dispute_not_found', 'dispute_invalid_state'],
      },
      schema: {
        tags,
        summary: 'Withdraw an open dispute (submitted or under_review → withdrawn)',
        description:
          'Nothing moves on the account. A won, lost or withdrawn dispute answers dispute_invalid_state. Emits dispute.updated.',
        params: DisputeIdParams,
        body: Type.Object({}, { additionalProperties: false }),
        response: { 200: Dispute },
      },
    },
    async (req) => withdrawDispute(unitOf(req, deps), req.ctx, req.params.dispute_id),
  )

  app.post(
    '/v1/simulate/disputes/:dispute_id/resolve',
    {
      config: {
        simulator: true,
        scope: 'transactions:write',
        errors: [
          'dispute_not_found',
          'dispute_invalid_state',
          'operation_unsupported',
          'program_not_provisioned',
        ],
      },
      schema: {
        tags: ['Simulator'],
        summary: 'Decide an open dispute (sandbox only)',
        description:
          "The card network's decision: `won` credits the disputed amount to the account (ledger entry `dispute_credit`, in the " +
          'same transaction as the status change), `lost` moves nothing. A submitted dispute passes through under_review first. ' +
          'Final disputes answer dispute_invalid_state; a program whose processor has no dispute simulator (sim_basic) answers 422 ' +
          'operation_unsupported. Emits dispute.updated.',
        params: DisputeIdParams,
        body: DisputeResolve,
        response: { 200: Dispute },
      },
    },
    async (req) =>
      resolveDispute(unitOf(req, deps), req.ctx, req.params.dispute_id, req.body.outcome),
  )
}
