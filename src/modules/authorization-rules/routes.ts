import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { unitOf } from '../../http/idempotency.js'
import { ListEnvelope } from '../../http/pagination.js'
import { registerBacktests } from './backtest-routes.js'
import {
  AuthorizationRule,
  AuthorizationRuleCreate,
  AuthorizationRuleDeleted,
  AuthorizationRuleListQuery,
  AuthorizationRuleParams,
  AuthorizationRuleUpdate,
} from './schemas.js'
import { createRule, deleteRule, listRules, retrieveRule, updateRule } from './service.js'

const tags = ['Authorization rules']
const read = 'cards:read'
const write = 'cards:write'

/** /v1/authorization_rules: the organization's velocity limits, conditions and merchant locks on its cards. */
export function registerAuthorizationRules(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/authorization_rules',
    {
      schema: {
        tags,
        summary: 'Create an authorization rule',
        description:
          'A `velocity_limit`, `condition` or `merchant_lock` on the programs, accounts, cardholders or cards of `scope` ' +
          '(every id yours, of the level named; `exclude_ids` skips cards, accounts or cardholders under it). The rule ' +
          'starts `enabled`; `mode: "shadow"` records what it would decline without declining. Rules only add declines: ' +
          "they never approve what the card's own controls refuse. A bad field answers 400 naming it " +
          '(`parameters.window.type`, `scope.ids[1]`, `parameters.conditions[0].operator`). Emits authorization_rule.created.',
        body: AuthorizationRuleCreate,
        response: { 201: AuthorizationRule },
      },
      config: { scope: write },
    },
    async (req, reply) =>
      reply.code(201).send(await createRule(unitOf(req, deps), req.ctx, req.body)),
  )

  app.get(
    '/v1/authorization_rules',
    {
      schema: {
        tags,
        summary: 'List authorization rules, newest first',
        description:
          '`card_id` lists the rules that apply to that card, enabled or not: those on its program, its account, its ' +
          'cardholder or itself, except those that exclude the card, its account or its cardholder.',
        querystring: AuthorizationRuleListQuery,
        response: { 200: ListEnvelope(AuthorizationRule, 'AuthorizationRule') },
      },
      config: { scope: read },
    },
    async (req) => listRules(deps, req.ctx, req.query),
  )

  app.get(
    '/v1/authorization_rules/:authorization_rule_id',
    {
      schema: {
        tags,
        summary: 'Retrieve an authorization rule',
        params: AuthorizationRuleParams,
        response: { 200: AuthorizationRule },
      },
      config: { scope: read, errors: ['authorization_rule_not_found'] },
    },
    async (req) => retrieveRule(deps, req.ctx, req.params.authorization_rule_id),
  )

  app.patch(
    '/v1/authorization_rules/:authorization_rule_id',
    {
      schema: {
        tags,
        summary: 'Update an authorization rule',
        description:
          "Changes `name`, `parameters` (read against the rule's type; they replace the ones held), `mode` and `status` " +
          "(a disabled rule applies to no decision). A change of a velocity limit's `window`, `aggregate` or `filters` " +
          'starts its counting again; a new limit keeps what was counted. The scope and the type are fixed once created. Emits ' +
          'authorization_rule.updated when something changed.',
        params: AuthorizationRuleParams,
        body: AuthorizationRuleUpdate,
        response: { 200: AuthorizationRule },
      },
      config: { scope: write, errors: ['authorization_rule_not_found'] },
    },
    async (req) =>
      updateRule(unitOf(req, deps), req.ctx, req.params.authorization_rule_id, req.body),
  )

  app.delete(
    '/v1/authorization_rules/:authorization_rule_id',
    {
      schema: {
        tags,
        summary: 'Delete an authorization rule',
        description:
          'The rule stops applying at once and is no longer listed or retrieved. Emits authorization_rule.deleted.',
        params: AuthorizationRuleParams,
        response: { 200: AuthorizationRuleDeleted },
      },
      config: { scope: write, errors: ['authorization_rule_not_found'] },
    },
    async (req) => deleteRule(deps, req.ctx, req.params.authorization_rule_id),
  )

  registerBacktests(base, deps)
}
