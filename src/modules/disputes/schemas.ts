import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { DISPUTE_STATUSES } from './lifecycle.js'

const strict = { additionalProperties: false }
const Status = Type.Union(DISPUTE_STATUSES.map((s) => Type.Literal(s)))

const Evidence = Type.Union(
  [
    Type.String({ maxLength: 20_000 }),
    Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), { maxProperties: 50 }),
  ],
  {
    description:
      'Your supporting material: free text, or an object of your own structure (for example {explanation, receipt_url}); kept as sent',
  },
)

export const DisputeCreate = Type.Object(
  {
    transaction_id: Type.String({
      maxLength: 64,
      description: 'A settled capture transaction (txn_)',
    }),
    reason: Type.String({
      minLength: 1,
      maxLength: 500,
      description:
        'Why the cardholder disputes it, for example fraudulent, duplicate, not_received, not_as_described, canceled or other',
    }),
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1_000_000_000_000,
        description:
          'Minor units; default and maximum: what is left of the transaction (its amount minus refunds and won disputes)',
      }),
    ),
    evidence: Type.Optional(Evidence),
  },
  {
    ...strict,
    title: 'DisputeCreateRequest',
    examples: [
      {
        transaction_id: 'txn_01JD3S1A2B3C4D5E6F7G8H9J0K',
        reason: 'not_received',
        amount: 2500,
        evidence: 'Ordered on 1 Nov, never delivered; merchant does not answer.',
      },
    ],
  },
)
export type DisputeCreateBody = Static<typeof DisputeCreate>

export const Dispute = Type.Object(
  {
    id: Type.String({ description: 'dsp_ id' }),
    object: Type.Literal('dispute'),
    transaction_id: Type.String(),
    card_id: Type.String(),
    account_id: Type.String(),
    amount: Type.Integer({
      description: 'Minor units of `currency`; credited to the account when the dispute is won',
    }),
    currency: Type.String(),
    reason: Type.String(),
    evidence: Type.Union([Type.String(), Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
    status: Type.Union(
      DISPUTE_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'submitted → under_review → won | lost; submitted or under_review → withdrawn. won, lost and withdrawn are final.',
      },
    ),
    resolved_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it was won, lost or withdrawn',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'Dispute',
    examples: [
      {
        id: 'dsp_01JD3S9Z8Y7X6W5V4T3S2R1Q0P',
        object: 'dispute',
        transaction_id: 'txn_01JD3S1A2B3C4D5E6F7G8H9J0K',
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        account_id: 'acct_01JD3Q5W4V3T2S1R0Q9P8N7M6K',
        amount: 2500,
        currency: 'USD',
        reason: 'not_received',
        evidence: 'Ordered on 1 Nov, never delivered; merchant does not answer.',
        status: 'submitted',
        resolved_at: null,
        created_at: '2026-11-02T10:15:00.000Z',
        updated_at: '2026-11-02T10:15:00.000Z',
      },
    ],
  },
)
export type DisputeView = Static<typeof Dispute>

export const DisputeListQuery = Type.Object(
  {
    ...PageQuery,
    transaction_id: Type.Optional(Type.String({ maxLength: 64 })),
    card_id: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(Status),
  },
  strict,
)

export const DisputeIdParams = Type.Object({ dispute_id: Type.String() })

export const DisputeResolve = Type.Object(
  {
    outcome: Type.Union([Type.Literal('won'), Type.Literal('lost')], {
      description: 'won credits the disputed amount to the account',
    }),
  },
  {
    ...strict,
    title: 'SimulateDisputeResolveRequest',
    examples: [{ outcome: 'won' }, { outcome: 'lost' }],
  },
)
