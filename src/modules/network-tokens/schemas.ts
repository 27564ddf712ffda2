import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { TOKEN_STATUSES } from './lifecycle.js'

const strict = { additionalProperties: false }

export const WALLETS = ['apple_pay', 'google_pay', 'samsung_pay'] as const
export const Wallet = Type.Union(
  WALLETS.map((w) => Type.Literal(w)),
  { description: 'The wallet the token lives in' },
)
const TokenStatus = Type.Union(TOKEN_STATUSES.map((s) => Type.Literal(s)))

export const NetworkToken = Type.Object(
  {
    id: Type.String({ description: 'ntok_ id' }),
    object: Type.Literal('network_token'),
    card_id: Type.String(),
    wallet: Type.String({ description: 'apple_pay, google_pay or samsung_pay' }),
    status: Type.Union(
      TOKEN_STATUSES.map((s) => Type.Literal(s)),
      {
        description:
          'requested → active ⇄ suspended; any → deleted (terminal). Authorizations through a token that is not active decline with token_inactive.',
      },
    ),
    activated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    deleted_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'NetworkToken',
    examples: [
      {
        id: 'ntok_01JD3Q9Z8X7W6V5T4S3R2Q1P0N',
        object: 'network_token',
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        wallet: 'apple_pay',
        status: 'active',
        activated_at: '2026-11-02T10:15:00.000Z',
        deleted_at: null,
        created_at: '2026-11-02T10:15:00.000Z',
        updated_at: '2026-11-02T10:15:00.000Z',
      },
    ],
  },
)
export type NetworkTokenView = Static<typeof NetworkToken>

export const NetworkTokenListQuery = Type.Object(
  {
    ...PageQuery,
    card_id: Type.Optional(
      Type.String({ maxLength: 64, description: 'Only the tokens of this card' }),
    ),
    status: Type.Optional(TokenStatus),
    wallet: Type.Optional(Wallet),
  },
  strict,
)

export const NetworkTokenIdParams = Type.Object({ network_token_id: Type.String() })

export const SimulateNetworkToken = Type.Object(
  {
    card_id: Type.String({
      maxLength: 64,
      description: 'An active card of a program whose processor simulates wallet provisioning',
    }),
    wallet: Wallet,
    activate: Type.Optional(
      Type.Boolean({
        default: true,
        description:
          'Whether the issuer approves the provisioning at once (default). false leaves the token `requested` until ' +
          'POST /v1/simulate/network_tokens/{id}/activate.',
      }),
    ),
  },
  {
    ...strict,
    title: 'SimulateNetworkTokenRequest',
    examples: [
      { card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8N', wallet: 'apple_pay' },
      { card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8N', wallet: 'google_pay', activate: false },
    ],
  },
)
export type SimulateNetworkTokenBody = Static<typeof SimulateNetworkToken>
