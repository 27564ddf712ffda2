import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import type { ErrorCode } from '../../http/errors.js'
import { unitOf } from '../../http/idempotency.js'
import { ListEnvelope } from '../../http/pagination.js'
import {
  AuthorizationRuleBacktest,
  AuthorizationRuleBacktestCreate,
  BacktestListQuery,
  BacktestParams,
  MAX_BACKTEST_DAYS,
} from './backtest-schemas.js'
import { createBacktest, listBacktests, retrieveBacktest } from './backtests.js'
import { AuthorizationRuleParams } from './schemas.js'

const tags = ['Authorization rules']
const errors: ErrorCode[] = ['authorization_rule_not_found']

/** /v1/authorization_rules/{id}/backtests: a rule replayed over the stored authorizations of a window. */
export function registerBacktests(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/authorization_rules/:authorization_rule_id/backtests',
    {
      schema: {
        tags,
        summary: 'Backtest an authorization rule',
        description:
          'Replays the rule as it is now over the authorizations made in `[from, to)` (at most ' +
          `${MAX_BACKTEST_DAYS} days), velocity limits included, as if it had been active, and reports how many it ` +
          'would have declined, with examples. Answers `202` with the backtest `pending`; a job runs it and emits ' +
          'authorization_rule.backtest_completed. `to` not after `from`, or too far, answers 400 naming `to`.',
        params: AuthorizationRuleParams,
        body: AuthorizationRuleBacktestCreate,
        response: { 202: AuthorizationRuleBacktest },
      },
      config: { scope: 'cards:write', errors },
    },
    async (req, reply) =>
      reply
        .code(202)
        .send(
          await createBacktest(
            unitOf(req, deps),
            req.ctx,
            req.params.authorization_rule_id,
            req.body,
          ),
        ),
  )

  app.get(
    '/v1/authorization_rules/:authorization_rule_id/backtests',
    {
      schema: {
        tags,
        summary: "List a rule's backtests, newest first",
        params: AuthorizationRuleParams,
        querystring: BacktestListQuery,
        response: { 200: ListEnvelope(AuthorizationRuleBacktest, 'AuthorizationRuleBacktest') },
      },
      config: { scope: 'cards:read', errors },
    },
    async (req) => listBacktests(deps, req.ctx, req.params.authorization_rule_id, req.query),
  )

  app.get(
    '/v1/authorization_rules/:authorization_rule_id/backtests/:backtest_id',
    {
      schema: {
        tags,
        summary: 'Retrieve a backtest',
        description:
          '`pending` until its job has run; then `completed` with `results`, or `failed`.',
        params: BacktestParams,
        response: { 200: AuthorizationRuleBacktest },
      },
      config: { scope: 'cards:read', errors: [...errors, 'authorization_rule_backtest_not_found'] },
    },
    async (req) =>
      retrieveBacktest(deps, req.ctx, req.params.authorization_rule_id, req.params.backtest_id),
  )
}
