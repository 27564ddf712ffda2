import { Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { CurrencyCode } from '../../http/schema-types.js'

export const ENTRY_TYPES = [
  'credit',
  'debit',
  'hold',
  'hold_release',
  'capture',
  'refund',
  'dispute_credit',
  'esim_purchase',
  'fx_fee',
  'esim_refund',
] as const
export type EntryType = (typeof ENTRY_TYPES)[number]

/** Largest single credit or debit (minor units). */
export const MAX_ADJUSTMENT = 1_000_000_000_000

export const AccountAdjustmentRequest = Type.Object(
  {
    amount: Type.Integer({
      minimum: 1,
      maximum: MAX_ADJUSTMENT,
      description: 'Minor units of the account currency, 1 … 10^12',
    }),
    client_transaction_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description:
          'Your id of the causing event; unique per account, never expires. The same id with the same amount and direction replays (200, Idempotent-Replay: true, nothing moves); with another amount or direction it is 409 adjustment_already_applied.',
      }),
    ),
    reference: Type.Optional(
      Type.String({
        maxLength: 255,
        description: 'Free-text label for reconciliation; not unique',
      }),
    ),
    description: Type.Optional(Type.String({ maxLength: 1000 })),
    currency: Type.Optional(
      CurrencyCode('When given, must be the account currency (currency_mismatch otherwise)'),
    ),
  },
  { additionalProperties: false, title: 'AccountAdjustmentRequest' },
)

export const LedgerEntry = Type.Object(
  {
    id: Type.String({ description: 'le_ id' }),
    object: Type.Literal('ledger_entry'),
    account_id: Type.String(),
    type: Type.Union(ENTRY_TYPES.map((t) => Type.Literal(t))),
    amount: Type.Integer({
      description:
        'Signed: the change this entry made (ledger balance for settled types; available balance for hold and hold_release)',
    }),
    currency: Type.String(),
    ledger_balance_after: Type.Integer(),
    held_balance_after: Type.Integer(),
    available_balance_after: Type.Integer(),
    source_id: Type.Union([Type.String(), Type.Null()], {
      description:
        'The object that caused the entry (authorization, transaction, order), null for credits and debits',
    }),
    client_transaction_id: Type.Union([Type.String(), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()]),
    description: Type.Union([Type.String(), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'LedgerEntry',
    examples: [
      {
        id: 'le_01JD3QC4D5E6F7G8H9J0K1M2N3',
        object: 'ledger_entry',
        account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
        type: 'credit',
        amount: 50000,
        currency: 'USD',
        ledger_balance_after: 50000,
        held_balance_after: 0,
        available_balance_after: 50000,
        source_id: null,
        client_transaction_id: 'payin-20261101-0042',
        reference: 'Salary November',
        description: 'Bank transfer received',
        created_at: '2026-11-01T12:10:00.000Z',
      },
    ],
  },
)

export const EntriesQuery = Type.Object(PageQuery, { additionalProperties: false })
