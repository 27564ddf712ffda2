import { type Static, type TSchema, Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import {
  AGGREGATES,
  ATTRIBUTES,
  OPERATORS,
  RULE_MODES,
  RULE_STATUSES,
  RULE_TYPES,
  SCOPE_LEVELS,
  WINDOW_TYPES,
} from './rule.js'
import { MAX_SCOPE_IDS } from './scope.js'

const strict = { additionalProperties: false }
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const OneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Enum([...values], { type: 'string', ...(description ? { description } : {}) })

const RuleName = Type.String({
  minLength: 1,
  maxLength: 100,
  description: 'Your name for the rule',
})
const Mode = OneOf(
  RULE_MODES,
  '`active` declines; `shadow` never declines and records `would_decline` where it would have',
)
const RuleTypeField = OneOf(
  RULE_TYPES,
  'What the rule checks: `velocity_limit`, `condition` or `merchant_lock`; fixed once created',
)

const EXAMPLE_ID = 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X'

const RuleScope = Type.Object(
  {
    level: OneOf(SCOPE_LEVELS, 'What `ids` name: programs, accounts, cardholders or cards'),
    ids: Type.Array(Type.String(), { description: 'The ids of that level the rule applies to' }),
    exclude_ids: Type.Array(Type.String(), {
      description: 'Cards, accounts or cardholders under the scope that the rule skips',
    }),
  },
  { title: 'AuthorizationRuleScope' },
)

const RuleWindowView = Type.Object({
  type: OneOf(
    WINDOW_TYPES,
    'Calendar windows (UTC; the week starts on Monday), all time, or rolling',
  ),
  seconds: Nullable(
    Type.Integer({ description: 'The length of a rolling window; null otherwise' }),
  ),
})

const Codes = (description: string) => Type.Array(Type.String(), { description })

export const VelocityLimitParameters = Type.Object(
  {
    window: RuleWindowView,
    aggregate: OneOf(
      AGGREGATES,
      "Whose spending counts: the card's, its account's or its cardholder's",
    ),
    limit_amount: Nullable(
      Type.Integer({ description: 'Minor units of the account currency; null: no amount limit' }),
    ),
    limit_count: Nullable(
      Type.Integer({ description: 'Approved authorizations; null: no count limit' }),
    ),
    filters: Type.Object({
      include_mccs: Codes('Only these merchant categories count (empty: all)'),
      exclude_mccs: Codes('These merchant categories do not count'),
      include_countries: Codes('Only merchants of these countries count (empty: all)'),
      exclude_countries: Codes('Merchants of these countries do not count'),
      merchant_currencies: Codes('Only spend in these merchant currencies counts (empty: all)'),
    }),
  },
  { title: 'VelocityLimitParameters' },
)

const ConditionValueView = Type.Union(
  [Type.String(), Type.Integer(), Type.Array(Type.Union([Type.String(), Type.Integer()]))],
  { description: 'A text or a number, or a list of them for is_one_of and is_not_one_of' },
)

export const ConditionParameters = Type.Object(
  {
    conditions: Type.Array(
      Type.Object({
        attribute: OneOf(ATTRIBUTES),
        operator: OneOf(OPERATORS),
        value: ConditionValueView,
      }),
      { description: 'The rule declines when every condition holds' },
    ),
  },
  { title: 'ConditionParameters' },
)

export const MerchantLockParameters = Type.Object(
  {
    merchants: Type.Array(
      Type.Object({
        name: Nullable(Type.String({ description: 'A wildcard pattern (`*`, `?`), any case' })),
        mcc: Nullable(Type.String()),
        country: Nullable(Type.String()),
      }),
      { description: 'Only merchants matching one of these may be approved' },
    ),
  },
  { title: 'MerchantLockParameters' },
)

export const AuthorizationRule = Type.Object(
  {
    id: Type.String({ description: 'arl_ id' }),
    object: Type.Literal('authorization_rule'),
    name: Type.String(),
    scope: RuleScope,
    type: RuleTypeField,
    parameters: Type.Union([VelocityLimitParameters, ConditionParameters, MerchantLockParameters], {
      description: "The type's parameters, every key present (docs: Authorization rules)",
    }),
    mode: Mode,
    status: OneOf(RULE_STATUSES, 'A disabled rule applies to no decision'),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'AuthorizationRule',
    examples: [
      {
        id: EXAMPLE_ID,
        object: 'authorization_rule',
        name: 'At most 500.00 a day on gambling',
        scope: {
          level: 'program',
          ids: ['prog_01JD3Q0A2B4C6D8E0F2G4H6J8K'],
          exclude_ids: ['card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M'],
        },
        type: 'velocity_limit',
        parameters: {
          window: { type: 'day', seconds: null },
          aggregate: 'card',
          limit_amount: 50000,
          limit_count: null,
          filters: {
            include_mccs: ['7995'],
            exclude_mccs: [],
            include_countries: [],
            exclude_countries: [],
            merchant_currencies: [],
          },
        },
        mode: 'active',
        status: 'enabled',
        created_at: '2026-11-01T12:00:00.000Z',
        updated_at: '2026-11-01T12:00:00.000Z',
      },
    ],
  },
)
export type AuthorizationRuleView = Static<typeof AuthorizationRule>

const PARAMETERS_DESCRIPTION =
  "The type's parameters (checked against `type`; a bad field answers 400 naming it, e.g. " +
  '`parameters.window.type`). `velocity_limit`: `{window: {type: day|week|month|year|all_time|rolling, seconds?}, ' +
  'aggregate: card|account|cardholder, limit_amount?, limit_count?, filters?: {include_mccs, exclude_mccs, ' +
  'include_countries, exclude_countries, merchant_currencies}}` (one limit at least). `condition`: `{conditions: ' +
  '[{attribute, operator, value}]}`, declining when all hold. `merchant_lock`: `{merchants: [{name?, mcc?, country?}]}`, ' +
  'approving only those. Shapes as answered: VelocityLimitParameters, ConditionParameters, MerchantLockParameters.'

const ParametersInput = Type.Record(Type.String(), Type.Unknown(), {
  description: PARAMETERS_DESCRIPTION,
})

const ScopeIds = (description: string, minItems: number) =>
  Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
    minItems,
    maxItems: MAX_SCOPE_IDS,
    description,
  })

export const AuthorizationRuleCreate = Type.Object(
  {
    name: RuleName,
    scope: Type.Object(
      {
        level: OneOf(SCOPE_LEVELS),
        ids: ScopeIds(
          `1 to ${MAX_SCOPE_IDS} ids of the level (prog_, acct_, chd_ or card_), all of your organization`,
          1,
        ),
        exclude_ids: Type.Optional(
          ScopeIds(
            'Cards, accounts or cardholders under the scope to skip: under a program its accounts, cards and any ' +
              "cardholder; under an account its cards; under a cardholder its accounts and cards; a card's rule none",
            0,
          ),
        ),
      },
      { ...strict, title: 'AuthorizationRuleScopeInput' },
    ),
    type: RuleTypeField,
    parameters: ParametersInput,
    mode: Mode,
  },
  {
    ...strict,
    title: 'AuthorizationRuleCreateRequest',
    examples: [
      {
        name: 'Three purchases an hour at most',
        scope: { level: 'account', ids: ['acct_01JD3Q5W3V2T1S0R9Q8P7N6M5K'] },
        type: 'velocity_limit',
        parameters: {
          window: { type: 'rolling', seconds: 3600 },
          aggregate: 'account',
          limit_count: 3,
        },
        mode: 'shadow',
      },
      {
        name: 'No foreign spend over 200.00',
        scope: { level: 'card', ids: ['card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M'] },
        type: 'condition',
        parameters: {
          conditions: [
            { attribute: 'merchant_country', operator: 'is_not', value: 'USA' },
            { attribute: 'amount', operator: 'gt', value: 20000 },
          ],
        },
        mode: 'active',
      },
    ],
  },
)
export type AuthorizationRuleCreateBody = Static<typeof AuthorizationRuleCreate>

export const AuthorizationRuleUpdate = Type.Object(
  {
    name: Type.Optional(RuleName),
    parameters: Type.Optional(ParametersInput),
    mode: Type.Optional(Mode),
    status: Type.Optional(OneOf(RULE_STATUSES)),
  },
  {
    ...strict,
    title: 'AuthorizationRuleUpdateRequest',
    examples: [{ mode: 'active' }, { status: 'disabled' }],
  },
)
export type AuthorizationRuleUpdateBody = Static<typeof AuthorizationRuleUpdate>

export const AuthorizationRuleListQuery = Type.Object(
  {
    ...PageQuery,
    card_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Only the rules that apply to this card (enabled or not): its program, account, cardholder or itself, minus exclusions',
      }),
    ),
  },
  strict,
)
export type AuthorizationRuleListQueryType = Static<typeof AuthorizationRuleListQuery>

export const AuthorizationRuleParams = Type.Object({
  authorization_rule_id: Type.String({ maxLength: 200 }),
})

export const AuthorizationRuleDeleted = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('authorization_rule'),
    deleted: Type.Literal(true),
  },
  {
    title: 'AuthorizationRuleDeleted',
    examples: [{ id: EXAMPLE_ID, object: 'authorization_rule', deleted: true }],
  },
)
