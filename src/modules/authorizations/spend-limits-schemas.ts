import { Type, type Static, type TSchema } from 'typebox'

const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])
const Amount = (description: string) => Nullable(Type.Integer({ description }))
const Literals = <T extends string>(values: readonly T[], description: string) =>
  Type.Enum([...values], { type: 'string', description })

export const CardIdParams = Type.Object({ card_id: Type.String({ maxLength: 200 }) })

/** The windows a spend limit counts in: the rules' windows, and a card control's `per_authorization`. */
export const SPEND_LIMIT_WINDOWS = [
  'per_authorization',
  'day',
  'week',
  'month',
  'year',
  'all_time',
  'rolling',
] as const

export const SpendLimit = Type.Object(
  {
    source: Type.Object({
      type: Literals(
        ['card_control', 'authorization_rule'] as const,
        "The card's own spending control, or an authorization rule that applies to the card",
      ),
      interval: Nullable(
        Type.String({ description: "A card control's interval as the card names it (`daily`, …)" }),
      ),
      rule_id: Nullable(
        Type.String({ description: "The rule's id (`arl_…`); null for a control" }),
      ),
      name: Nullable(Type.String({ description: "The rule's name; null for a control" })),
      mode: Nullable(
        Literals(
          ['active', 'shadow'] as const,
          "The rule's mode: a `shadow` rule declines nothing; null for a control",
        ),
      ),
    }),
    window: Type.Object({
      type: Literals(
        SPEND_LIMIT_WINDOWS,
        'Calendar windows in UTC (the week from Monday), `all_time`, `rolling`, or `per_authorization` (one ' +
          "authorization's total; nothing is used up)",
      ),
      seconds: Nullable(Type.Integer({ description: 'The length of a rolling window' })),
    }),
    aggregate: Literals(
      ['card', 'account', 'cardholder'] as const,
      "Whose spending is counted: the card's, every card of its account, or every card of its cardholder",
    ),
    currency: Type.String({ description: "The account's currency: every amount is in it" }),
    limit_amount: Amount('Minor units; null: no amount limit'),
    used_amount: Amount(
      'What the window counts now (held plus captured); null for per_authorization',
    ),
    remaining_amount: Amount('What one more authorization may still take (never below 0)'),
    limit_count: Amount('Approved authorizations; null: no count limit'),
    used_count: Amount(
      'Approved authorizations the window counts now; null for a card control (it limits amounts only)',
    ),
    remaining_count: Amount('How many more may be approved; null without a count limit'),
    resets_at: Nullable(
      Type.String({
        format: 'date-time',
        description:
          "When what is used stops counting: a calendar window's next start; a rolling window's oldest counted " +
          'spend leaving it; null for all_time, per_authorization, or a rolling window counting nothing',
      }),
    ),
  },
  { title: 'SpendLimit' },
)
export type SpendLimitView = Static<typeof SpendLimit>

export const SpendLimitList = Type.Object(
  {
    object: Type.Literal('list'),
    data: Type.Array(SpendLimit),
  },
  {
    title: 'SpendLimitList',
    examples: [
      {
        object: 'list',
        data: [
          {
            source: {
              type: 'card_control',
              interval: 'daily',
              rule_id: null,
              name: null,
              mode: null,
            },
            window: { type: 'day', seconds: null },
            aggregate: 'card',
            currency: 'USD',
            limit_amount: 50000,
            used_amount: 12500,
            remaining_amount: 37500,
            limit_count: null,
            used_count: null,
            remaining_count: null,
            resets_at: '2026-11-30T00:00:00.000Z',
          },
          {
            source: {
              type: 'authorization_rule',
              interval: null,
              rule_id: 'arl_01JD3R5M7N9P1Q3R5S7T9V1W3X',
              name: 'Three purchases an hour at most',
              mode: 'active',
            },
            window: { type: 'rolling', seconds: 3600 },
            aggregate: 'account',
            currency: 'USD',
            limit_amount: null,
            used_amount: 12500,
            remaining_amount: null,
            limit_count: 3,
            used_count: 1,
            remaining_count: 2,
            resets_at: '2026-11-29T13:01:00.000Z',
          },
        ],
      },
    ],
  },
)
export type SpendLimitListView = Static<typeof SpendLimitList>
