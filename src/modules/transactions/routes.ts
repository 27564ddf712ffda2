import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, type PageParams } from '../../http/pagination.js'
import { NoBody } from '../../http/schema-types.js'
import {
  RefundRequest,
  SimulateRefund,
  Transaction,
  TransactionIdParams,
  TransactionListQuery,
} from './schemas.js'
import { merchantRefund, refundTransaction } from './refunds.js'
import { listTransactions, retrieveTransaction, settleTransaction } from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Transactions']

/** Transactions: reads, refunds, and the sandbox settlement and merchant-refund feeds. */
export function registerTransactions(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.get(
    '/v1/transactions',
    {
      config: { scope: 'transactions:read' },
      schema: {
        tags,
        summary: 'List transactions, most recently created first',
        description:
          'Captures and refunds of your cards. Filters: card_id, account_id, authorization_id, type, status.',
        querystring: TransactionListQuery,
        response: { 200: ListEnvelope(Transaction, 'Transaction') },
      },
    },
    async (req) => {
      const { card_id, account_id, authorization_id, type, status, ...page } = req.query
      return listTransactions(
        deps,
        req.ctx,
        { card_id, account_id, authorization_id, type, status },
        page as PageParams,
      )
    },
  )

  app.get(
    '/v1/transactions/:transaction_id',
    {
      config: { scope: 'transactions:read', errors: ['transaction_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve a transaction',
        params: TransactionIdParams,
        response: { 200: Transaction },
      },
    },
    async (req) => retrieveTransaction(deps, req.ctx, req.params.transaction_id),
  )

  app.post(
    '/v1/transactions/:transaction_id/refund',
    {
      config: {
        scope: 'transactions:write',
        errors: ['transaction_not_found', 'transaction_not_refundable', 'refund_exceeds_original'],
      },
      schema: {
        tags,
        summary: 'Refund a transaction',
        description:
          'Returns `amount` (default: all that is left) of a settled capture to its account: the account is credited ' +
          '(ledger entry `refund`) and a settled `refund` transaction is created and answered. The capture becomes `refunded` once fully ' +
          'refunded. A capture that is not settled, already fully refunded, or a refund itself answers transaction_not_refundable; more ' +
          "than is left answers refund_exceeds_original. `amount` is in the capture's `merchant_currency` and judged there " +
          "(`merchant_refunded_amount`); a capture in another currency than the account's converts the refund at the rate of " +
          "the refund's time with the program's fx_markup_bps (the refund's `fx`), so a full refund may credit more or less than " +
          "the capture debited. Under the program's `fx_fee: separate` the markup comes back as its own ledger entry `fx_fee`. " +
          'Emits transaction.created (the refund) and transaction.updated (the capture).',
        params: TransactionIdParams,
        body: RefundRequest,
        response: { 201: Transaction },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          await refundTransaction(
            unitOf(req, deps),
            req.ctx,
            req.params.transaction_id,
            req.body ?? {},
          ),
        ),
  )

  app.post(
    '/v1/simulate/transactions/:transaction_id/settle',
    {
      config: { simulator: true, scope: 'transactions:write', errors: ['transaction_not_found'] },
      schema: {
        tags: ['Simulator'],
        summary: 'Settle a transaction now',
        description:
          'Moves a `pending` capture to `settled` now (the settlement job does it 24 hours after the capture) and emits ' +
          'transaction.updated. A transaction that is already settled or refunded is answered unchanged.',
        params: TransactionIdParams,
        body: NoBody,
        response: { 200: Transaction },
      },
    },
    async (req) => settleTransaction(unitOf(req, deps), req.ctx, req.params.transaction_id),
  )

  app.post(
    '/v1/simulate/refunds',
    {
      config: {
        simulator: true,
        scope: 'transactions:write',
        errors: ['card_not_found', 'card_not_provisioned', 'currency_mismatch'],
      },
      schema: {
        tags: ['Simulator'],
        summary: 'Simulate a merchant-initiated refund',
        description:
          "A merchant sends `amount` in `currency` back to the card without naming a capture. The card's account is credited " +
          '(ledger entry `refund`, also on a blocked account) and a settled `refund` transaction is created. In another currency ' +
          "than the account's the amount is converted at the card processor's rate now with the program's fx_markup_bps " +
          '(`merchant_amount`, `merchant_currency` and `fx` record it; under `fx_fee: separate` the markup is its own ledger ' +
          'entry `fx_fee`); a program that blocks foreign spend answers currency_mismatch, a currency the service does not ' +
          'know 400 invalid_parameter naming currency. Emits transaction.created.',
        body: SimulateRefund,
        response: { 201: Transaction },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await merchantRefund(unitOf(req, deps), req.ctx, req.body)),
  )
}
