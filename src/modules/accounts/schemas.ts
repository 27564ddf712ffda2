import { Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { CurrencyCode } from '../../http/schema-types.js'

const strict = { additionalProperties: false }

const Currency = CurrencyCode()

// Key length goes in propertyNames: a Record's key schema becomes a pattern and its maxLength would be dropped.
export const Metadata = Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
  maxProperties: 20,
  propertyNames: { minLength: 1, maxLength: 40 },
  description:
    'Your own key-value pairs: at most 20 keys, keys up to 40 characters, values up to 500. Not searchable.',
})

export const ACCOUNT_STATUSES = ['open', 'blocked'] as const

export const Account = Type.Object(
  {
    id: Type.String({ description: 'acct_ id' }),
    object: Type.Literal('account'),
    program_id: Type.String({ description: 'prog_ id, inherited by everything the account owns' }),
    cardholder_id: Type.String({ description: 'chd_ id' }),
    currency: Type.String({ description: 'One currency per account, never converted' }),
    status: Type.Union(
      ACCOUNT_STATUSES.map((s) => Type.Literal(s)),
      { description: 'open or blocked' },
    ),
    ledger_balance: Type.Integer({ description: 'Settled value in the account, minor units' }),
    held_balance: Type.Integer({ description: 'Sum of the holds of pending authorizations' }),
    available_balance: Type.Integer({
      description: 'ledger_balance − held_balance: what debits and authorizations can use',
    }),
    has_upstream_reference: Type.Boolean({
      description: 'false while the account does not yet exist at the processor',
    }),
    metadata: Metadata,
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'Account',
    examples: [
      {
        id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
        object: 'account',
        program_id: 'prog_01JD3Q7Y6X5W4V3T2S1R0Q9P8J',
        cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        currency: 'USD',
        status: 'open',
        ledger_balance: 50000,
        held_balance: 4000,
        available_balance: 46000,
        has_upstream_reference: true,
        metadata: { purpose: 'travel' },
        created_at: '2026-11-01T12:05:00.000Z',
        updated_at: '2026-11-03T08:30:00.000Z',
      },
    ],
  },
)

export const AccountCreateRequest = Type.Object(
  {
    program_id: Type.String({
      maxLength: 64,
      description: 'Required, even with a single program: one of your programs in this environment',
    }),
    cardholder_id: Type.String({ maxLength: 64 }),
    currency: Currency,
    metadata: Type.Optional(Metadata),
  },
  { ...strict, title: 'AccountCreateRequest' },
)

export const AccountListQuery = Type.Object(
  {
    ...PageQuery,
    cardholder_id: Type.Optional(Type.String({ maxLength: 64 })),
    program_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description: 'Omitted: accounts of every program of the organization',
      }),
    ),
  },
  strict,
)

export const AccountParams = Type.Object({ account_id: Type.String({ maxLength: 200 }) })

export const BLOCK_REASONS = ['fraud', 'lost', 'requested', 'other'] as const

export const AccountBlockRequest = Type.Object(
  {
    reason: Type.Optional(
      Type.Enum([...BLOCK_REASONS], {
        description: 'Why the account is blocked: fraud, lost, requested or other',
      }),
    ),
    note: Type.Optional(Type.String({ maxLength: 500, description: 'Free text for your records' })),
  },
  { ...strict, title: 'AccountBlockRequest' },
)

/** Unblock takes the same optional body as block (the reason and note are kept with the status change). */
export const AccountUnblockRequest = Type.Object(
  {
    reason: Type.Optional(Type.Enum([...BLOCK_REASONS])),
    note: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { ...strict, title: 'AccountUnblockRequest' },
)
