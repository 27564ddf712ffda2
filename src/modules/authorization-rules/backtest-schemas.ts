import { type Static, type TSchema, Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'

const strict = { additionalProperties: false }
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

export const BACKTEST_STATUSES = ['pending', 'completed', 'failed'] as const

/** Longest window one backtest replays. */
export const MAX_BACKTEST_DAYS = 366

/** Most examples a backtest reports. */
export const BACKTEST_EXAMPLES = 10

export const AuthorizationRuleBacktestCreate = Type.Object(
  {
    from: Type.String({
      format: 'date-time',
      description: 'Start of the window, inclusive (RFC 3339, with an offset)',
    }),
    to: Type.String({
      format: 'date-time',
      description: `End of the window, exclusive: after \`from\`, at most ${MAX_BACKTEST_DAYS} days later`,
    }),
  },
  {
    ...strict,
    title: 'AuthorizationRuleBacktestCreateRequest',
    examples: [{ from: '2026-11-01T00:00:00Z', to: '2026-11-29T00:00:00Z' }],
  },
)
export type BacktestCreateBody = Static<typeof AuthorizationRuleBacktestCreate>

const Example = Type.Object({
  authorization_id: Type.String(),
  card_id: Type.String(),
  amount: Type.Integer({ description: "What it asked, minor units of its account's currency" }),
  merchant: Type.Object({
    name: Nullable(Type.String()),
    mcc: Nullable(Type.String()),
    country: Nullable(Type.String()),
  }),
  created_at: Type.String({ format: 'date-time' }),
})

const Results = Type.Object({
  evaluated: Type.Integer({
    description: 'Authorizations of the window on cards the rule applies to (approved or not then)',
  }),
  would_decline: Type.Integer({ description: 'Of those, how many the rule would have declined' }),
  approved_would_decline: Type.Integer({
    description: 'Of those, the ones approved then: what turning the rule on would have changed',
  }),
  declined_amount: Type.Integer({
    description:
      'What those approved ones asked, in all (minor units of their accounts’ currencies)',
  }),
  examples: Type.Array(Example, {
    description: `The first approved ones it would have declined, oldest first (at most ${BACKTEST_EXAMPLES})`,
  }),
})

const EXAMPLE_ID = 'arb_01JD3T2V4W6X8Y0Z2A4B6C8D0E'

export const AuthorizationRuleBacktest = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('authorization_rule_backtest'),
    rule_id: Type.String(),
    from: Type.String({ format: 'date-time' }),
    to: Type.String({ format: 'date-time' }),
    status: Type.Enum([...BACKTEST_STATUSES], {
      type: 'string',
      description:
        '`pending` until the replay has run; then `completed` (with `results`) or `failed`',
    }),
    results: Nullable(Results),
    failure_reason: Nullable(Type.String({ description: 'Why a `failed` backtest failed' })),
    created_at: Type.String({ format: 'date-time' }),
    completed_at: Nullable(Type.String({ format: 'date-time' })),
  },
  {
    title: 'AuthorizationRuleBacktest',
    examples: [
      {
        id: EXAMPLE_ID,
        object: 'authorization_rule_backtest',
        rule_id: 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X',
        from: '2026-11-01T00:00:00.000Z',
        to: '2026-11-29T00:00:00.000Z',
        status: 'completed',
        results: {
          evaluated: 1204,
          would_decline: 31,
          approved_would_decline: 27,
          declined_amount: 412_350,
          examples: [
            {
              authorization_id: 'auth_01JD3S8K2M4N6P8Q0R2S4T6V8W',
              card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M',
              amount: 15_000,
              merchant: { name: 'Lucky Spins', mcc: '7995', country: 'MLT' },
              created_at: '2026-11-03T21:14:05.000Z',
            },
          ],
        },
        failure_reason: null,
        created_at: '2026-11-29T09:00:00.000Z',
        completed_at: '2026-11-29T09:00:02.000Z',
      },
    ],
  },
)
export type BacktestView = Static<typeof AuthorizationRuleBacktest>

export const BacktestParams = Type.Object({
  authorization_rule_id: Type.String({ maxLength: 200 }),
  backtest_id: Type.String({ maxLength: 200 }),
})

export const BacktestListQuery = Type.Object({ ...PageQuery }, strict)
export type BacktestListQueryType = Static<typeof BacktestListQuery>
