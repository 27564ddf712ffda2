import type { FastifyInstance } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import type { ErrorCode } from '../../http/errors.js'
import { NoBody } from '../../http/schema-types.js'
import { Transaction } from '../transactions/index.js'
import {
  Authorization,
  AuthorizationIdParams,
  CaptureRequest,
  IncrementRequest,
  ReverseRequest,
  SimulateAuthorization,
} from './schemas.js'
import { authorize, capture, expire, increment, reverse } from './service.js'
import { unitOf } from '../../http/idempotency.js'

const tags = ['Simulator']
const config = (errors: ErrorCode[]) => ({ simulator: true, scope: 'transactions:write', errors })

const DECISION_ORDER =
  'Checks, in order: card status (card_inactive for a card not yet issued or not activated, card_frozen, card_closed, ' +
  'card_expired, also when the expiry month has passed), the presented expiry (invalid_expiry) and security code (invalid_cvc), ' +
  'the network token (token_inactive unless active), the account (account_blocked), currency_mismatch (another currency ' +
  "than the account's when the card's program blocks foreign spend), the card's spending " +
  'controls (mcc_blocked, country_blocked, then spending_limit: per_authorization, and daily/weekly/monthly/all_time sums of ' +
  'approved spend since the start of the UTC day, ISO week (Monday) or month) and finally the available balance (insufficient_funds). ' +
  'Then, when the organization has an authorization endpoint (PUT /v1/authorization_endpoint), it is asked about what these rules ' +
  'approve and the answer comes after its decision: integrator_declined when it declines, integrator_unavailable when it does not ' +
  'answer usably and its stand_in is decline; a partial approval holds the amount it names. `decision` says who decided.'

/** Sandbox only (production answers the same 404 as an unknown path): the card network, as seen by the issuer. */
export function registerAuthorizationSimulatorRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/simulate/authorizations',
    {
      config: config([
        'card_not_found',
        'token_not_found',
        'processor_unavailable',
        'processor_permission_denied',
      ]),
      schema: {
        tags,
        summary: 'Simulate a card authorization',
        description:
          'A merchant asks to authorize `amount` in `currency` on the card; the service decides in real time. In another ' +
          "currency than the account's, the amount is converted at the card processor's rate with the program's " +
          'fx_markup_bps (`merchant_amount`, `merchant_currency` and `fx` record it; a currency the service does not know ' +
          'is 400 invalid_parameter naming currency, a converted amount beyond 10^12 names amount); the rules and the ' +
          'hold use the converted amount. Approved: status `pending`, ' +
          'a hold of the amount on the account (ledger entry `hold`) that expires after 7 days. Declined: status `declined` with ' +
          `decline_reason; nothing is held. Both answer 201 and emit authorization.created. ${DECISION_ORDER} ` +
          'A `network_token_id` that is not a token of this card answers 404 token_not_found. `cvc` is checked against the processor.',
        body: SimulateAuthorization,
        response: { 201: Authorization },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await authorize(unitOf(req, deps), req.ctx, req.body)),
  )

  app.post(
    '/v1/simulate/authorizations/:authorization_id/increment',
    {
      config: config(['authorization_not_found', 'authorization_invalid_state']),
      schema: {
        tags,
        summary: 'Simulate an incremental authorization',
        description:
          'Raises a pending authorization by `amount` (a hotel stay grows, a tip is added), in the merchant currency: ' +
          "converted at the authorization's recorded rate and markup when it is foreign. Decided by the same rules as a new " +
          "authorization (per_authorization limits count the new total), then by the organization's authorization endpoint if it has " +
          'one (a partial approval raises by the amount it names). Approved: `amount` and `held_amount` grow. Declined: nothing ' +
          'changes but `request_history`, which records the decline reason. Emits authorization.updated. An authorization that is ' +
          'not pending answers 422 authorization_invalid_state.',
        params: AuthorizationIdParams,
        body: IncrementRequest,
        response: { 200: Authorization },
      },
    },
    async (req) =>
      increment(unitOf(req, deps), req.ctx, req.params.authorization_id, req.body.amount),
  )

  app.post(
    '/v1/simulate/authorizations/:authorization_id/reverse',
    {
      config: config(['authorization_not_found', 'authorization_invalid_state']),
      schema: {
        tags,
        summary: 'Simulate a reversal',
        description:
          'Gives back `amount` of the hold (all of it when omitted; more than is held is invalid_parameter), in the ' +
          "merchant currency (converted at the authorization's recorded rate when it is foreign), ledger entry " +
          '`hold_release`. Fully released, the authorization is `reversed` (`closed` when part was captured before). Emits authorization.updated.',
        params: AuthorizationIdParams,
        body: ReverseRequest,
        response: { 200: Authorization },
      },
    },
    async (req) =>
      reverse(unitOf(req, deps), req.ctx, req.params.authorization_id, req.body?.amount),
  )

  app.post(
    '/v1/simulate/authorizations/:authorization_id/capture',
    {
      config: config([
        'authorization_not_found',
        'authorization_invalid_state',
        'insufficient_funds',
        'account_blocked',
      ]),
      schema: {
        tags,
        summary: 'Simulate a capture (clearing)',
        description:
          'Captures `amount` (default: what is held) and answers the new `capture` transaction, status `pending` until it settles ' +
          '(24 hours, or POST /v1/simulate/transactions/{id}/settle). Ledger entry `capture`. A partial capture releases the rest ' +
          '(`hold_release`) and closes the authorization unless `close_authorization` is false. An over-capture takes the excess from ' +
          'the available balance (insufficient_funds when it is not there). An expired authorization can still be captured (late ' +
          "presentment), entirely from the available balance. On an authorization in another currency than the account's, " +
          '`currency` may name the merchant currency: `amount` (default: what is held, in that currency) is then converted at the ' +
          "rate of the capture's time with the program's fx_markup_bps, and a difference from the hold is a partial or an " +
          "over-capture; without it `amount` is the account's and keeps the authorization's rate. The transaction carries " +
          "`merchant_amount`, `merchant_currency` and `fx`; under the program's `fx_fee: separate` the markup is its own ledger " +
          'entry `fx_fee`. Another currency, or one the service does not know, is 400 invalid_parameter naming currency. ' +
          'Emits transaction.created and authorization.updated.',
        params: AuthorizationIdParams,
        body: CaptureRequest,
        response: { 201: Transaction },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(
          await capture(
            unitOf(req, deps),
            req.ctx,
            req.params.authorization_id,
            req.body?.amount,
            req.body?.close_authorization ?? true,
            req.body?.currency,
          ),
        ),
  )

  app.post(
    '/v1/simulate/authorizations/:authorization_id/expire',
    {
      config: config(['authorization_not_found', 'authorization_invalid_state']),
      schema: {
        tags,
        summary: 'Expire an authorization now',
        description:
          'Runs now what happens 7 days after approval when nothing captured the authorization: the hold is released ' +
          '(`hold_release`) and the status becomes `expired`. Emits authorization.updated. Only a pending authorization can expire.',
        params: AuthorizationIdParams,
        body: NoBody,
        response: { 200: Authorization },
      },
    },
    async (req) => expire(unitOf(req, deps), req.ctx, req.params.authorization_id),
  )
}
