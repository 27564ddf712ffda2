import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { ListEnvelope } from '../../http/pagination.js'
import { accountCapability, Account, AccountParams } from '../accounts/index.js'
import { AccountAdjustmentRequest, EntriesQuery, LedgerEntry } from './schemas.js'
import { keyInStatement, replayStoredAnswer, unitOf } from '../../http/idempotency.js'
import { adjustBalanceUnderKey, listEntries, type Direction } from './service.js'

const ADJUSTMENT_ERRORS = [
  'account_not_found',
  'adjustment_already_applied',
  'idempotency_request_in_progress',
  'account_blocked',
  'account_not_fundable',
  'account_not_provisioned',
  'currency_mismatch',
] as const

/** Credit, debit and the ledger of an account. */
export function registerLedgerRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  const tags = ['Accounts']

  const adjustment = (direction: Direction) => ({
    config: {
      scope: 'accounts:write',
      // The adjustment's own statement locks the Idempotency-Key, reads its stored answer and stores the new one.
      idempotent: 'in-statement' as const,
      capability: accountCapability(
        deps,
        direction === 'credit' ? 'account_credit' : 'account_debit',
      ),
      errors:
        direction === 'debit'
          ? [...ADJUSTMENT_ERRORS, 'insufficient_funds' as const]
          : [...ADJUSTMENT_ERRORS],
    },
    schema: {
      tags,
      summary: direction === 'credit' ? 'Credit an account' : 'Debit an account',
      description:
        (direction === 'credit'
          ? 'Adds `amount` to both ledger_balance and available_balance. '
          : 'Takes `amount` from the balance; 402 insufficient_funds when available_balance is lower (held funds cannot be debited). ') +
        'A client_transaction_id already applied with the same amount and direction answers 200 with `Idempotent-Replay: true` and moves nothing; ' +
        'with another amount or direction 409 adjustment_already_applied; while the original is still running 409 idempotency_request_in_progress. ' +
        `Emits account.${direction === 'credit' ? 'credited' : 'debited'}.`,
      params: AccountParams,
      body: AccountAdjustmentRequest,
      response: { 200: Account },
    },
  })

  for (const direction of ['credit', 'debit'] as const) {
    app.post(`/v1/accounts/:account_id/${direction}`, adjustment(direction), async (req, reply) => {
      const key = keyInStatement(req)
      const outcome = await adjustBalanceUnderKey(
        unitOf(req, deps),
        req.ctx,
        req.params.account_id,
        direction,
        req.body,
        key,
      )
      // The stored answer goes out as the JSON text it was stored as, not through the Account serializer.
      if ('stored' in outcome)
        return reply.send(
          replayStoredAnswer(unitOf(req, deps), key!, reply, outcome.stored) as never,
        )
      if (outcome.replay) reply.header('Idempotent-Replay', 'true')
      return outcome.account
    })
  }

  app.get(
    '/v1/accounts/:account_id/entries',
    {
      config: { scope: 'accounts:read', errors: ['account_not_found'] },
      schema: {
        tags,
        summary: "List the account's ledger entries, newest first",
        description:
          'The append-only ledger: every movement of the balances, with the balances after it. Entries are never changed or removed.',
        params: AccountParams,
        querystring: EntriesQuery,
        response: { 200: ListEnvelope(LedgerEntry, 'LedgerEntry') },
      },
    },
    async (req) => listEntries(deps, req.ctx, req.params.account_id, req.query),
  )
}
