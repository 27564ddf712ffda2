import { Type } from 'typebox'

/** The program settings of spending in another currency than the account's (decisions.md, "Spending in any currency"). */
export const ForeignSpend = Type.Union([Type.Literal('allowed'), Type.Literal('blocked')], {
  description:
    "Whether its cards may spend in another currency than their account's: `allowed` (default; the amount is converted " +
    'into the account currency) or `blocked` (such an authorization declines `currency_mismatch`)',
})
export const FxMarkupBps = Type.Integer({
  minimum: 0,
  maximum: 1000,
  description:
    'The markup on a converted amount, in basis points, 0–1000 (default 0): amount = merchant_amount × rate × ' +
    '(1 + fx_markup_bps / 10 000)',
})
export const FxFee = Type.Union([Type.Literal('included'), Type.Literal('separate')], {
  description:
    'Where the markup goes: `included` (default) in the converted amount, or `separate` as its own ledger entry (`fx_fee`)',
})

export const Program = Type.Object(
  {
    id: Type.String({ description: 'prog_ id' }),
    object: Type.Literal('program'),
    name: Type.String(),
    processor: Type.String({
      description: 'Adapter name of the card processor (sim_full, sim_basic)',
    }),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
    currencies: Type.Array(Type.String(), {
      description: 'Three-letter currency codes accounts may hold',
    }),
    form_factors: Type.Array(Type.String()),
    card_types: Type.Array(Type.String()),
    card_brand: Type.String(),
    capabilities: Type.Array(Type.String(), {
      description: 'Optional operations mounted for this program',
    }),
    kyc_initial_status: Type.String(),
    one_card_per_cardholder: Type.Boolean(),
    identity_evidence_required: Type.Boolean(),
    address_change_requires_kyc: Type.Boolean(),
    foreign_spend: ForeignSpend,
    fx_markup_bps: FxMarkupBps,
    fx_fee: FxFee,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({
      format: 'date-time',
      description: 'When the operator last changed it (its creation time until then)',
    }),
  },
  {
    title: 'Program',
    examples: [
      {
        id: 'prog_01JD3Q7Y6X5W4V3T2S1R0Q9P8J',
        object: 'program',
        name: 'Consumer debit',
        processor: 'sim_full',
        environment: 'sandbox',
        currencies: ['USD', 'EUR', 'GBP'],
        form_factors: ['virtual', 'physical'],
        card_types: ['debit', 'prepaid'],
        card_brand: 'visa',
        capabilities: [
          'account_credit',
          'account_debit',
          'account_status',
          'card_pin',
          'card_details',
          'network_tokens',
          'three_d_secure',
        ],
        kyc_initial_status: 'not_started',
        one_card_per_cardholder: false,
        identity_evidence_required: false,
        address_change_requires_kyc: false,
        foreign_spend: 'allowed',
        fx_markup_bps: 200,
        fx_fee: 'included',
        created_at: '2026-10-15T09:00:00.000Z',
        updated_at: '2026-10-15T09:00:00.000Z',
      },
    ],
  },
)
