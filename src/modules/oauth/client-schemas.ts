import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { SCOPES } from './scopes.js'

const strict = { additionalProperties: false }

const ScopeName = Type.Enum([...SCOPES], { type: 'string' })
const Label = Type.String({ minLength: 1, maxLength: 200, description: 'Your name for the client' })
const Cidrs = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: 100,
  description:
    'IPv4/IPv6 addresses or CIDR ranges the client may call from (token requests and /v1); applies on top of the organization network policy, so it can only narrow it',
})
const Jwk = Type.Object(
  {},
  {
    additionalProperties: true,
    description:
      'A public JWK: EC P-256 (ES256) or RSA of at least 2048 bits with exponent 65537 (RS256)',
  },
)
const Jwks = Type.Object(
  {
    keys: Type.Array(Jwk, {
      description:
        '1 to 3 public keys, each with a distinct `kid` when there is more than one; private members (`d`, `p`, `q`, …) are refused',
    }),
  },
  {
    additionalProperties: true,
    description: 'JWK Set of the public keys that sign the client assertions',
  },
)

export const OAuthClient = Type.Object(
  {
    id: Type.String({ description: 'oc_ id: the `iss` and `sub` of the client assertions' }),
    object: Type.Literal('oauth_client'),
    environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')], {
      description: 'The environment its tokens act in: the one of the token that manages it',
    }),
    label: Type.String(),
    scopes: Type.Array(ScopeName, { description: 'Scopes its tokens can be given' }),
    jwks: Type.Object(
      { keys: Type.Array(Jwk) },
      { description: 'Its public keys (only the public members are kept)' },
    ),
    ip_allowlist: Type.Union([Type.Array(Type.String()), Type.Null()], {
      description:
        'Addresses it may call from; null: no restriction beyond the organization network policy',
    }),
    status: Type.Union([Type.Literal('active'), Type.Literal('revoked')], {
      description: 'revoked: final; its tokens are refused and it can get no new ones',
    }),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    revoked_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  {
    title: 'OAuthClient',
    examples: [
      {
        id: 'oc_01JD3R7W9X1Y3Z5A7B9C1D3E5F',
        object: 'oauth_client',
        environment: 'sandbox',
        label: 'Card backend',
        scopes: ['cardholders:read', 'cardholders:write', 'cards:read', 'cards:write'],
        jwks: {
          keys: [
            {
              kty: 'EC',
              crv: 'P-256',
              x: 'f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU',
              y: 'x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0',
              kid: 'backend-2026-11',
              alg: 'ES256',
              use: 'sig',
            },
          ],
        },
        ip_allowlist: ['203.0.113.0/24'],
        status: 'active',
        created_at: '2026-11-01T12:00:00.000Z',
        updated_at: '2026-11-01T12:00:00.000Z',
        revoked_at: null,
      },
    ],
  },
)

export type OAuthClientView = Static<typeof OAuthClient>

export const OAuthClientCreateRequest = Type.Object(
  {
    label: Label,
    scopes: Type.Optional(
      Type.Array(ScopeName, {
        maxItems: SCOPES.length * 2,
        description:
          'Only scopes your own client holds (and this token was given). Omitted: every default scope you hold, never `cards:secrets` nor `clients:write`.',
      }),
    ),
    jwks: Jwks,
    ip_allowlist: Type.Optional(Type.Union([Cidrs, Type.Null()])),
  },
  { ...strict, title: 'OAuthClientCreateRequest' },
)

export const OAuthClientUpdateRequest = Type.Object(
  {
    label: Type.Optional(Label),
    scopes: Type.Optional(
      Type.Array(ScopeName, {
        maxItems: SCOPES.length * 2,
        description: 'Replaces the scopes: only ones you hold. Applies to the next token.',
      }),
    ),
    jwks: Type.Optional(Jwks),
    ip_allowlist: Type.Optional(
      Type.Union([Cidrs, Type.Null()], {
        description:
          'Replaces the allowlist (null clears it); applies at once, to tokens already issued too',
      }),
    ),
  },
  { ...strict, title: 'OAuthClientUpdateRequest' },
)

export const OAuthClientListQuery = Type.Object(
  {
    ...PageQuery,
    status: Type.Optional(
      Type.Union([Type.Literal('active'), Type.Literal('revoked')], {
        description: 'Only clients in this status',
      }),
    ),
  },
  strict,
)

export const ClientParams = Type.Object({ oauth_client_id: Type.String({ maxLength: 200 }) })
export const EmptyBody = Type.Object({}, strict)
