import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { CountryCode, CurrencyCode } from '../../http/schema-types.js'

const strict = { additionalProperties: false }

export const AUTHENTICATION_STATUSES = ['pending', 'approved', 'declined', 'expired'] as const
const Status = Type.Union(AUTHENTICATION_STATUSES.map((s) => Type.Literal(s)))

export const MerchantInput = Type.Object(
  {
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Shown to the cardholder in the challenge',
      }),
    ),
    mcc: Type.Optional(
      Type.String({ pattern: '^[0-9]{4}$', description: 'Four-digit merchant category code' }),
    ),
    city: Type.Optional(Type.String({ maxLength: 100 })),
    country: Type.Optional(CountryCode()),
  },
  { ...strict, title: 'AuthenticationMerchantInput' },
)

export const Merchant = Type.Object(
  {
    name: Type.Union([Type.String(), Type.Null()]),
    mcc: Type.Union([Type.String(), Type.Null()]),
    city: Type.Union([Type.String(), Type.Null()]),
    country: Type.Union([Type.String(), Type.Null()]),
  },
  {
    title: 'AuthenticationMerchant',
    examples: [{ name: 'Corner Books', mcc: '5942', city: 'Springfield', country: 'USA' }],
  },
)

export const Authentication = Type.Object(
  {
    id: Type.String({ description: 'tdsa_ id' }),
    object: Type.Literal('authentication'),
    card_id: Type.String(),
    amount: Type.Integer({ description: 'Minor units of `currency`' }),
    currency: Type.String(),
    merchant: Merchant,
    challenge_method: Type.Literal('out_of_band', {
      description: 'Answered in your own application while the merchant checkout waits',
    }),
    status: Type.Union(
      AUTHENTICATION_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'pending → approved | declined by your answer, or expired five minutes after creation',
      },
    ),
    expires_at: Type.String({ format: 'date-time' }),
    decided_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], {
      description: 'When it was approved, declined or expired',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'Authentication',
    examples: [
      {
        id: 'tdsa_01JD3R0A1B2C3D4E5F6G7H8J9K',
        object: 'authentication',
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        amount: 4999,
        currency: 'USD',
        merchant: { name: 'Corner Books', mcc: '5942', city: 'Springfield', country: 'USA' },
        challenge_method: 'out_of_band',
        status: 'pending',
        expires_at: '2026-11-02T10:20:00.000Z',
        decided_at: null,
        created_at: '2026-11-02T10:15:00.000Z',
        updated_at: '2026-11-02T10:15:00.000Z',
      },
    ],
  },
)
export type AuthenticationView = Static<typeof Authentication>

export const AuthenticationListQuery = Type.Object(
  {
    ...PageQuery,
    card_id: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(Status),
  },
  strict,
)

export const AuthenticationIdParams = Type.Object({ authentication_id: Type.String() })

export const SimulateAuthentication = Type.Object(
  {
    card_id: Type.String({
      maxLength: 64,
      description: 'An active card of a program whose processor simulates 3-D Secure challenges',
    }),
    amount: Type.Integer({ minimum: 1, maximum: 1_000_000_000_000, description: 'Minor units' }),
    currency: CurrencyCode('Three-letter currency code'),
    merchant: Type.Optional(MerchantInput),
  },
  {
    ...strict,
    title: 'SimulateAuthenticationRequest',
    examples: [
      {
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        amount: 4999,
        currency: 'USD',
        merchant: { name: 'Corner Books', mcc: '5942', city: 'Springfield', country: 'USA' },
      },
    ],
  },
)
export type SimulateAuthenticationBody = Static<typeof SimulateAuthentication>
