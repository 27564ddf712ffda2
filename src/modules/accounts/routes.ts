import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope, PageQuery } from '../../http/pagination.js'
import { registerProcessorFaultRoutes } from '../../processors/fault-routes.js'
import { accountCapability } from './capability.js'
import {
  Account,
  AccountBlockRequest,
  AccountCreateRequest,
  AccountListQuery,
  AccountParams,
  AccountUnblockRequest,
} from './schemas.js'
import {
  createAccount,
  listAccountCards,
  listAccounts,
  retrieveAccount,
  setAccountStatus,
} from './service.js'
import { unitOf } from '../../http/idempotency.js'

const CardItem = Type.Unknown({
  description: 'A Card (masked), as returned by GET /v1/cards/{card_id}.',
})

/** Accounts, their ledger operations and the processor-fault simulator. */
export function registerAccounts(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Accounts']

  app.post(
    '/v1/accounts',
    {
      config: {
        scope: 'accounts:write',
        errors: [
          'cardholder_not_found',
          'kyc_not_approved',
          'kyc_identity_required',
          'program_not_provisioned',
          'processor_unavailable',
          'processor_permission_denied',
        ],
      },
      schema: {
        tags,
        summary: 'Open an account',
        description:
          '`program_id` is required even with a single program; a program that is not yours answers 400 invalid_parameter whether or not it exists. ' +
          "`currency` must be one of the program's currencies. The cardholder's KYC must be approved (with identity where the program's processor runs its own checks). " +
          'On processors that create accounts asynchronously `has_upstream_reference` is false until `account.provisioned`. Emits account.created (and account.provisioned).',
        body: AccountCreateRequest,
        response: { 201: Account },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createAccount(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/accounts',
    {
      config: { scope: 'accounts:read' },
      schema: {
        tags,
        summary: 'List accounts, most recently opened first',
        querystring: AccountListQuery,
        response: { 200: ListEnvelope(Account, 'Account') },
      },
    },
    async (req) => listAccounts(deps, req.ctx, req.query),
  )

  app.get(
    '/v1/accounts/:account_id',
    {
      config: { scope: 'accounts:read', errors: ['account_not_found'] },
      schema: {
        tags,
        summary: 'Retrieve an account with its current balances',
        params: AccountParams,
        response: { 200: Account },
      },
    },
    async (req) => retrieveAccount(deps, req.ctx, req.params.account_id),
  )

  app.get(
    '/v1/accounts/:account_id/cards',
    {
      config: { scope: 'cards:read', errors: ['account_not_found'] },
      schema: {
        tags,
        summary: 'List the cards that spend from the account',
        params: AccountParams,
        querystring: Type.Object(PageQuery, { additionalProperties: false }),
        response: { 200: ListEnvelope(CardItem, 'AccountCard') },
      },
    },
    async (req) => listAccountCards(deps, req.ctx, req.params.account_id, req.query),
  )

  app.post(
    '/v1/accounts/:account_id/block',
    {
      config: {
        scope: 'accounts:write',
        capability: accountCapability(deps, 'account_status'),
        errors: ['account_not_found', 'processor_unavailable', 'processor_permission_denied'],
      },
      schema: {
        tags,
        summary: 'Block an account',
        description:
          'Cards funded by the account decline with account_blocked; credits and debits are refused; balances and existing holds stay ' +
          '(holds still release and capture). The processor is told first: when it fails (502) the account stays open. ' +
          'Blocking a blocked account answers it unchanged. Emits account.blocked.',
        params: AccountParams,
        body: AccountBlockRequest,
        response: { 200: Account },
      },
    },
    async (req) =>
      setAccountStatus(unitOf(req, deps), req.ctx, req.params.account_id, 'blocked', req.body),
  )

  app.post(
    '/v1/accounts/:account_id/unblock',
    {
      config: {
        scope: 'accounts:write',
        capability: accountCapability(deps, 'account_status'),
        errors: ['account_not_found', 'processor_unavailable', 'processor_permission_denied'],
      },
      schema: {
        tags,
        summary: 'Unblock an account',
        description:
          'Reverses a block. Unblocking an open account answers it unchanged. Emits account.unblocked.',
        params: AccountParams,
        body: AccountUnblockRequest,
        response: { 200: Account },
      },
    },
    async (req) =>
      setAccountStatus(unitOf(req, deps), req.ctx, req.params.account_id, 'open', req.body),
  )

  registerProcessorFaultRoutes(base, deps)
}
