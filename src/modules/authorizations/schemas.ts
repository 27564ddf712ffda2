import { Type, type Static, type TSchema } from 'typebox'
import { FxDetails } from '../../http/fx-details.js'
import { PageQuery } from '../../http/pagination.js'
import { MAX_AMOUNT, Merchant, MerchantInput } from '../transactions/index.js'
import { DECLINE_REASONS, type DeclineReason } from './decide.js'
import { CurrencyCode } from '../../http/schema-types.js'

const strict = { additionalProperties: false }
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const AUTHORIZATION_STATUSES = [
  'pending',
  'closed',
  'reversed',
  'expired',
  'declined',
] as const

const Amount = Type.Integer({
  minimum: 1,
  maximum: MAX_AMOUNT,
  description: 'Minor units of the currency, 1 … 10^12',
})
const Currency = CurrencyCode('Three-letter currency code')

/** Who decided a request (decisions.md, "Authorization decided by the integrator"). */
export const AuthorizationDecision = Type.Object(
  {
    source: Type.Union(
      [Type.Literal('svc'), Type.Literal('integrator'), Type.Literal('stand_in')],
      {
        description:
          "`svc`: the service's own rules (no authorization endpoint, a decline by the rules, which is never sent, or a decline at the " +
          'balance re-check when the hold is written); `integrator`: your authorization endpoint answered; `stand_in`: it did not answer ' +
          'usably (or its circuit was open) and its `stand_in` setting decided',
      },
    ),
    latency_ms: Type.Integer({
      minimum: 0,
      description: 'How long your authorization endpoint took; 0 when none was called',
    }),
    stand_in_reason: Type.Optional(
      Type.Union(
        [Type.Literal('timeout'), Type.Literal('error'), Type.Literal('invalid_response')],
        {
          description:
            'Why the stand-in decided: no answer within timeout_ms, a non-2xx answer, a failed connection or an open circuit (`error`), ' +
            'or a 2xx answer that is not `{"approved": true|false[, "amount": n]}` (`invalid_response`); a body over 64 KiB or cut off ' +
            'is `invalid_response` and declines whatever the stand_in setting',
        },
      ),
    ),
  },
  {
    title: 'AuthorizationDecision',
    examples: [
      { source: 'integrator', latency_ms: 84 },
      { source: 'stand_in', latency_ms: 1500, stand_in_reason: 'timeout' },
    ],
  },
)

/** How the merchant's amount was converted into the account's currency (shared with eSIM orders' `fx`). */
export const AuthorizationFx = FxDetails

/** What one authorization rule said of a request (docs/authorization-rules.md, "In the decision"). */
export const AuthorizationRuleResult = Type.Object(
  {
    rule_id: Type.String({ description: 'arl_ id of the authorization rule' }),
    mode: Type.Union([Type.Literal('active'), Type.Literal('shadow')]),
    outcome: Type.Union(
      [Type.Literal('passed'), Type.Literal('declined'), Type.Literal('would_decline')],
      {
        description:
          '`passed`; `declined` (an active rule: the request was declined `rule_declined`, naming the first such rule in ' +
          '`rule_id`); `would_decline` (a shadow rule, which never declines)',
      },
    ),
  },
  {
    title: 'AuthorizationRuleResult',
    examples: [
      { rule_id: 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X', mode: 'shadow', outcome: 'would_decline' },
    ],
  },
)

const RuleResults = (what: string) =>
  Type.Array(AuthorizationRuleResult, {
    description:
      `What each authorization rule that applies to the card said of ${what}, in the rules' id order; empty when ` +
      "none applies or when an earlier check declined (the card's own controls come first)",
  })

const RuleId = (what: string) =>
  Nullable(
    Type.String({
      description: `The active authorization rule that declined ${what} (\`decline_reason\` \`rule_declined\`); null otherwise`,
    }),
  )

export const AuthorizationRequest = Type.Object(
  {
    type: Type.Union([Type.Literal('authorization'), Type.Literal('increment')]),
    amount: Type.Integer({
      description: "What the request asked, in the merchant's currency (`merchant_currency`)",
    }),
    approved: Type.Boolean(),
    decline_reason: Nullable(Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    decision: AuthorizationDecision,
    rule_results: RuleResults('this request'),
    rule_id: RuleId('this request'),
  },
  { title: 'AuthorizationRequest' },
)

export const Authorization = Type.Object(
  {
    id: Type.String({ description: 'auth_ id' }),
    object: Type.Literal('authorization'),
    status: Type.Union(
      AUTHORIZATION_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'pending (hold placed), closed (captured), reversed, expired (hold released after 7 days), declined',
      },
    ),
    approved: Type.Boolean(),
    amount: Type.Integer({
      description:
        'Approved amount (first request plus approved increments); for a declined authorization, the amount asked',
    }),
    held_amount: Type.Integer({ description: 'What the hold on the account still holds' }),
    captured_amount: Type.Integer(),
    reversed_amount: Type.Integer(),
    currency: Type.String({
      description:
        "The account's currency: `amount` and the amounts above are in it (what is held and debited)",
    }),
    merchant_amount: Type.Integer({
      description:
        "What the merchant asked, in `merchant_currency` (increments included); equal to `amount` when it is the account's currency",
    }),
    merchant_currency: Type.String({
      description:
        "The merchant's currency; the account's currency when the spend needs no conversion",
    }),
    fx: Type.Union([AuthorizationFx, Type.Null()], {
      description:
        'How `merchant_amount` became `amount` = merchant_amount × rate × (1 + markup_bps / 10 000), rounded half ' +
        'away from zero in the account currency (each increment converted alike); null when the merchant asked in ' +
        'the account currency',
    }),
    merchant: Merchant,
    card_id: Type.String(),
    account_id: Type.String(),
    program_id: Type.String(),
    network_token_id: Nullable(Type.String()),
    decline_reason: Type.Unsafe<DeclineReason | null>({
      type: ['string', 'null'],
      enum: [...DECLINE_REASONS, null],
      description: 'Why a declined authorization was declined; null when approved',
    }),
    rule_id: RuleId('the authorization'),
    rule_results: RuleResults('the latest request (the authorization, or its latest increment)'),
    request_history: Type.Array(AuthorizationRequest, {
      description: 'The first request and every increment, approved or declined, oldest first',
    }),
    decision: AuthorizationDecision,
    expires_at: Nullable(
      Type.String({
        format: 'date-time',
        description: 'When the hold is released if nothing captures it (7 days)',
      }),
    ),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'Authorization',
    examples: [
      {
        id: 'auth_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        object: 'authorization',
        status: 'pending',
        approved: true,
        amount: 4416,
        held_amount: 4416,
        captured_amount: 0,
        reversed_amount: 0,
        currency: 'USD',
        merchant_amount: 4000,
        merchant_currency: 'EUR',
        fx: {
          rate: '1.0825',
          markup_bps: 200,
          fee_amount: 85,
          source: 'sandbox',
          rate_at: '2026-11-02T09:30:00.000Z',
        },
        merchant: { name: 'Hotel Aurora', mcc: '7011', city: 'Lisbon', country: 'PRT' },
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M',
        account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
        program_id: 'prog_01JD3Q7Y6X5W4V3T2S1R0Q9P8J',
        network_token_id: null,
        decline_reason: null,
        rule_id: null,
        rule_results: [
          { rule_id: 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X', mode: 'active', outcome: 'passed' },
        ],
        request_history: [
          {
            type: 'authorization',
            amount: 3000,
            approved: true,
            decline_reason: null,
            created_at: '2026-11-02T10:00:00.000Z',
            decision: { source: 'integrator', latency_ms: 84 },
            rule_results: [
              { rule_id: 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X', mode: 'active', outcome: 'passed' },
            ],
            rule_id: null,
          },
          {
            type: 'increment',
            amount: 1000,
            approved: true,
            decline_reason: null,
            created_at: '2026-11-03T08:30:00.000Z',
            decision: { source: 'svc', latency_ms: 0 },
            rule_results: [
              { rule_id: 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X', mode: 'active', outcome: 'passed' },
            ],
            rule_id: null,
          },
        ],
        decision: { source: 'svc', latency_ms: 0 },
        expires_at: '2026-11-09T10:00:00.000Z',
        created_at: '2026-11-02T10:00:00.000Z',
        updated_at: '2026-11-03T08:30:00.000Z',
      },
    ],
  },
)
export type AuthorizationView = Static<typeof Authorization>

export const AuthorizationIdParams = Type.Object({
  authorization_id: Type.String({ maxLength: 64 }),
})

export const AuthorizationListQuery = Type.Object(
  {
    ...PageQuery,
    card_id: Type.Optional(Type.String({ maxLength: 64 })),
    account_id: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(Type.Union(AUTHORIZATION_STATUSES.map((s) => Type.Literal(s)))),
  },
  strict,
)

export const SimulateAuthorization = Type.Object(
  {
    card_id: Type.String({ maxLength: 64 }),
    amount: Amount,
    currency: Currency,
    merchant: MerchantInput,
    network_token_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'The request comes through this network token of the card (ntok_)',
      }),
    ),
    exp_month: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 12,
        description: 'Expiry presented at checkout; a mismatch declines invalid_expiry',
      }),
    ),
    exp_year: Type.Optional(Type.Integer({ minimum: 2000, maximum: 2200 })),
    cvc: Type.Optional(
      Type.String({
        pattern: '^[0-9]{3,4}$',
        description: 'Security code presented at checkout; a mismatch declines invalid_cvc',
      }),
    ),
  },
  {
    ...strict,
    title: 'SimulateAuthorizationRequest',
    examples: [
      {
        card_id: 'card_01JC0000000000000000000000',
        amount: 2500,
        currency: 'USD',
        merchant: { name: 'Corner Cafe', mcc: '5814', city: 'Springfield', country: 'USA' },
      },
      {
        card_id: 'card_01JC0000000000000000000000',
        amount: 12000,
        currency: 'USD',
        merchant: { name: 'Hotel Aurora', mcc: '7011', city: 'Lisbon', country: 'PRT' },
        network_token_id: 'ntok_01JC0000000000000000000000',
        exp_month: 11,
        exp_year: 2029,
        cvc: '123',
      },
    ],
  },
)
export type SimulateAuthorizationBody = Static<typeof SimulateAuthorization>

export const IncrementRequest = Type.Object(
  { amount: Amount },
  {
    ...strict,
    title: 'SimulateIncrementRequest',
    examples: [{ amount: 1500 }],
  },
)

export const ReverseRequest = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_AMOUNT,
        description: 'Part of the held amount to give back; omitted: all of it',
      }),
    ),
  },
  { ...strict, title: 'SimulateReverseRequest', examples: [{}, { amount: 500 }] },
)

export const CaptureRequest = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_AMOUNT,
        description:
          'In `currency`. Omitted: the held amount (in the merchant currency: what is held, at the ' +
          "authorization's rate). Above it, the excess is taken from the available balance",
      }),
    ),
    currency: Type.Optional(
      CurrencyCode(
        "The account's currency (the default), or the authorization's `merchant_currency`: then `amount` is " +
          "the merchant's, converted at the rate of the capture's time with the program's markup",
      ),
    ),
    close_authorization: Type.Optional(
      Type.Boolean({
        description:
          'Default true: the rest of the hold is released and the authorization closes. false keeps the rest held for further captures',
      }),
    ),
  },
  {
    ...strict,
    title: 'SimulateCaptureRequest',
    examples: [
      {},
      { amount: 1800 },
      { amount: 1000, close_authorization: false },
      { amount: 2700 },
      { amount: 4000, currency: 'EUR' },
    ],
  },
)
