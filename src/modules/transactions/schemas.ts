import { Type, type Static, type TSchema } from 'typebox'
import { FxDetails } from '../../http/fx-details.js'
import { PageQuery } from '../../http/pagination.js'
import { CountryCode, CurrencyCode } from '../../http/schema-types.js'

const strict = { additionalProperties: false }
const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()])

/** The largest amount the card network carries, in minor units (10^12). */
export const MAX_AMOUNT = 1_000_000_000_000

export const MerchantInput = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    mcc: Type.Optional(
      Type.String({ pattern: '^[0-9]{4}$', description: 'Four-digit merchant category code' }),
    ),
    city: Type.Optional(Type.String({ maxLength: 100 })),
    country: Type.Optional(CountryCode()),
  },
  { ...strict, title: 'MerchantInput' },
)

export const Merchant = Type.Object(
  {
    name: Type.String(),
    mcc: Nullable(Type.String()),
    city: Nullable(Type.String()),
    country: Nullable(Type.String()),
  },
  {
    title: 'Merchant',
    examples: [{ name: 'Hotel Aurora', mcc: '7011', city: 'Lisbon', country: 'PRT' }],
  },
)

export const TRANSACTION_TYPES = ['capture', 'refund'] as const
export const TRANSACTION_STATUSES = ['pending', 'settled', 'refunded'] as const

export const Transaction = Type.Object(
  {
    id: Type.String({ description: 'txn_ id' }),
    object: Type.Literal('transaction'),
    type: Type.Union(
      TRANSACTION_TYPES.map((t) => Type.Literal(t)),
      { description: 'capture (money left the account) or refund (money came back)' },
    ),
    status: Type.Union(
      TRANSACTION_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'pending (captured, not yet settled), settled, refunded (fully). Refunds are settled when created',
      },
    ),
    amount: Type.Integer({
      description:
        "Positive minor units of the account's currency; the type says which way the money moved. In another " +
        "currency than the merchant's: the converted amount, markup included unless the program's fx_fee is " +
        '`separate` (then the markup is its own ledger entry `fx_fee`)',
    }),
    refunded_amount: Type.Integer({
      description:
        "Sum of refunds of this capture so far, in the account's currency (each converted at its own rate when the " +
        'capture is foreign, so it may differ from `amount` once fully refunded)',
    }),
    currency: Type.String({
      description: "The account's currency: `amount` and `refunded_amount` are in it",
    }),
    merchant_amount: Type.Integer({
      description:
        "What the merchant cleared or refunded, in `merchant_currency`; equal to `amount` when it is the account's currency",
    }),
    merchant_refunded_amount: Type.Integer({
      description:
        'Sum of refunds of this capture so far, in `merchant_currency`: a refund may give back at most ' +
        '`merchant_amount` minus this',
    }),
    merchant_currency: Type.String({
      description:
        "The merchant's currency; the account's currency when the transaction needed no conversion",
    }),
    fx: Type.Union([FxDetails, Type.Null()], {
      description:
        'How `merchant_amount` became `amount`: the rate this capture or refund converted at (a capture named in the ' +
        "merchant's currency and every refund take the rate of their own time; a capture named in the account's " +
        "currency keeps the authorization's) and the markup's part in `fee_amount`; null when the merchant used the " +
        'account currency',
    }),
    authorization_id: Type.Union([Type.String(), Type.Null()]),
    original_transaction_id: Type.Union([Type.String(), Type.Null()], {
      description: 'For a refund of a capture: that capture; null otherwise',
    }),
    card_id: Type.String(),
    account_id: Type.String(),
    program_id: Type.String(),
    merchant: Merchant,
    reason: Type.Union([Type.String(), Type.Null()], {
      description: 'The reason given for a refund',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    settled_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  {
    title: 'Transaction',
    examples: [
      {
        id: 'txn_01JD3Q7Y6X5W4V3T2S1R0Q9P8T',
        object: 'transaction',
        type: 'capture',
        status: 'settled',
        amount: 3796,
        refunded_amount: 500,
        currency: 'USD',
        merchant_amount: 3400,
        merchant_refunded_amount: 450,
        merchant_currency: 'EUR',
        fx: {
          rate: '1.1',
          markup_bps: 150,
          fee_amount: 56,
          source: 'sandbox',
          rate_at: '2026-11-05T12:00:00.000Z',
        },
        authorization_id: 'auth_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        original_transaction_id: null,
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M',
        account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
        program_id: 'prog_01JD3Q7Y6X5W4V3T2S1R0Q9P8J',
        merchant: { name: 'Hotel Aurora', mcc: '7011', city: 'Lisbon', country: 'PRT' },
        reason: null,
        created_at: '2026-11-05T12:00:00.000Z',
        updated_at: '2026-11-07T09:00:00.000Z',
        settled_at: '2026-11-06T12:00:30.000Z',
      },
    ],
  },
)
export type TransactionView = Static<typeof Transaction>

export const TransactionIdParams = Type.Object({ transaction_id: Type.String({ maxLength: 64 }) })

export const TransactionListQuery = Type.Object(
  {
    ...PageQuery,
    card_id: Type.Optional(Type.String({ maxLength: 64 })),
    account_id: Type.Optional(Type.String({ maxLength: 64 })),
    authorization_id: Type.Optional(Type.String({ maxLength: 64 })),
    type: Type.Optional(Type.Union(TRANSACTION_TYPES.map((t) => Type.Literal(t)))),
    status: Type.Optional(Type.Union(TRANSACTION_STATUSES.map((s) => Type.Literal(s)))),
  },
  strict,
)

export const RefundRequest = Type.Object(
  {
    amount: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: MAX_AMOUNT,
        description:
          "In the capture's `merchant_currency` (its `currency` when it needed no conversion). Omitted: everything " +
          'not refunded yet',
      }),
    ),
    currency: Type.Optional(
      CurrencyCode(
        "When given, the capture's `merchant_currency`: a refund is in the currency the merchant charged",
      ),
    ),
    reason: Type.Optional(
      Type.String({
        maxLength: 500,
        description: 'Why the money goes back (free text, kept on the refund transaction)',
      }),
    ),
  },
  {
    ...strict,
    title: 'RefundRequest',
    examples: [
      { amount: 500, reason: 'requested_by_customer' },
      {},
      { amount: 2000, currency: 'EUR' },
    ],
  },
)
export type RefundBody = Static<typeof RefundRequest>

export const SimulateRefund = Type.Object(
  {
    card_id: Type.String({ maxLength: 64 }),
    amount: Type.Integer({ minimum: 1, maximum: MAX_AMOUNT }),
    currency: CurrencyCode(),
    merchant: MerchantInput,
  },
  {
    ...strict,
    title: 'SimulateRefundRequest',
    examples: [
      {
        card_id: 'card_01JC0000000000000000000000',
        amount: 1999,
        currency: 'USD',
        merchant: { name: 'Bookshop', mcc: '5942', city: 'Leeds', country: 'GBR' },
      },
    ],
  },
)
export type SimulateRefundBody = Static<typeof SimulateRefund>
