import { Type, type Static } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { CountryCode } from '../../http/schema-types.js'
import { Address } from '../cardholders/index.js'

const strict = { additionalProperties: false }
const Mcc = Type.String({ pattern: '^[0-9]{4}$', description: 'Four-digit merchant category code' })

export const Metadata = Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
  maxProperties: 20,
  propertyNames: { minLength: 1, maxLength: 40 },
  description:
    'Your own key/value strings (up to 20 keys, key ≤ 40 characters, value ≤ 500). Not searchable.',
})

export const SPENDING_INTERVALS = [
  'per_authorization',
  'daily',
  'weekly',
  'monthly',
  'all_time',
] as const
export const SpendingInterval = Type.Union(SPENDING_INTERVALS.map((i) => Type.Literal(i)))

export const SpendingLimit = Type.Object(
  {
    amount: Type.Integer({
      minimum: 1,
      maximum: 1_000_000_000_000,
      description: 'Minor units of the account currency',
    }),
    interval: SpendingInterval,
  },
  strict,
)

/** Rules the authorization engine applies before approving; a rule the processor cannot enforce is refused. */
export const SpendingControls = Type.Object(
  {
    spending_limits: Type.Optional(Type.Array(SpendingLimit, { maxItems: 10 })),
    allowed_mccs: Type.Optional(Type.Array(Mcc, { maxItems: 500 })),
    blocked_mccs: Type.Optional(Type.Array(Mcc, { maxItems: 500 })),
    allowed_countries: Type.Optional(Type.Array(CountryCode(), { maxItems: 300 })),
    blocked_countries: Type.Optional(Type.Array(CountryCode(), { maxItems: 300 })),
  },
  { ...strict, title: 'SpendingControls' },
)

/** On the wire every key is present; an empty list means "no rule of this kind". */
export const SpendingControlsView = Type.Object(
  {
    spending_limits: Type.Array(Type.Object({ amount: Type.Integer(), interval: Type.String() })),
    allowed_mccs: Type.Array(Type.String()),
    blocked_mccs: Type.Array(Type.String()),
    allowed_countries: Type.Array(Type.String()),
    blocked_countries: Type.Array(Type.String()),
  },
  {
    title: 'SpendingControlsView',
    examples: [
      {
        spending_limits: [{ amount: 50000, interval: 'daily' }],
        allowed_mccs: [],
        blocked_mccs: ['7995'],
        allowed_countries: [],
        blocked_countries: ['PRK'],
      },
    ],
  },
)

/** An optional address part: null (as returned) or absent when there is none. */
const optionalPart = (maxLength: number) =>
  Type.Optional(
    Type.Unsafe<string | null>({
      type: ['string', 'null'],
      maxLength,
      description: 'Optional; null or absent when there is none.',
    }),
  )

/**
 * Every field optional in the schema: the service checks completeness (delivery_address_required), in order.
 * line2 and state also take null, so a delivery address (or a cardholder's address) read back can be sent as is.
 */
export const DeliveryAddressInput = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    line1: Type.Optional(Type.String({ maxLength: 200 })),
    line2: optionalPart(200),
    city: Type.Optional(Type.String({ maxLength: 100 })),
    state: optionalPart(100),
    postal_code: Type.Optional(Type.String({ maxLength: 20 })),
    country: Type.Optional(CountryCode()),
  },
  strict,
)

/** A cardholder's address (`Address`) with the name to deliver to. */
export const DeliveryAddress = Type.Object(
  { name: Type.String(), ...Address.properties },
  {
    title: 'DeliveryAddress',
    examples: [
      {
        name: 'Ada Lovelace',
        line1: '221B Baker Street',
        line2: null,
        city: 'London',
        state: null,
        postal_code: 'NW1 6XE',
        country: 'GBR',
      },
    ],
  },
)

export const FormFactor = Type.Union([Type.Literal('virtual'), Type.Literal('physical')])
export const CardType = Type.Union([
  Type.Literal('debit'),
  Type.Literal('prepaid'),
  Type.Literal('credit'),
])

/** Travel mode as asked: the cardholder's eSIM whose country the card may also spend in; null turns it off. */
export const TravelModeInput = Type.Union(
  [
    Type.Object(
      {
        esim_id: Type.String({
          maxLength: 64,
          description: "An eSIM (esim_) of the card's cardholder",
        }),
      },
      { ...strict, title: 'TravelModeRequest' },
    ),
    Type.Null(),
  ],
  {
    description:
      "While the eSIM's bundle is valid, its current country is added to the card's allowed_countries (a card without allowed_countries is unaffected: blocked_countries still decline). null turns it off.",
  },
)

/** Travel mode as the card shows it. */
export const TravelMode = Type.Union(
  [
    Type.Object(
      {
        esim_id: Type.String({ description: 'esim_ id' }),
        country: Type.Union([Type.String(), Type.Null()], {
          description: "The eSIM's current country (null until the network reports one)",
        }),
        active: Type.Boolean({
          description:
            "Whether the eSIM's bundle is valid now (not expired, suspended or canceled): only then is its country allowed",
        }),
      },
      { title: 'CardTravelMode' },
    ),
    Type.Null(),
  ],
  { description: 'Travel mode (null: off)' },
)

export const CardCreate = Type.Object(
  {
    cardholder_id: Type.String({ maxLength: 64 }),
    account_id: Type.String({
      maxLength: 64,
      description: 'The funding account (acct_); it must belong to the cardholder',
    }),
    form_factor: FormFactor,
    card_type: CardType,
    embossed_name: Type.Optional(
      Type.Unsafe<string | null>({
        type: ['string', 'null'],
        maxLength: 26,
        pattern: "^[A-Za-z0-9 .,'/&-]*$",
        description:
          "Required on every card (embossed_name_required): up to 26 characters of the card alphabet (letters, digits, space, . , ' / & -)",
      }),
    ),
    delivery_address: Type.Optional(
      Type.Unsafe<Static<typeof DeliveryAddressInput> | null>({
        ...DeliveryAddressInput,
        type: ['object', 'null'],
        description:
          'Required on every card, virtual too (delivery_address_required): complete means name, line1, city, postal_code and country',
      }),
    ),
    spending_controls: Type.Optional(SpendingControls),
    travel_mode: Type.Optional(TravelModeInput),
    metadata: Type.Optional(Metadata),
  },
  { ...strict, title: 'CardCreateRequest' },
)
export type CardCreateBody = Static<typeof CardCreate>

export const CardUpdate = Type.Object(
  {
    spending_controls: Type.Optional(SpendingControls),
    travel_mode: Type.Optional(TravelModeInput),
    metadata: Type.Optional(
      Type.Record(Type.String(), Type.Union([Type.String({ maxLength: 500 }), Type.Null()]), {
        propertyNames: { minLength: 1, maxLength: 40 },
        description:
          "Keys are merged into the card's metadata; null or an empty string removes a key (at most 20 keys after the merge).",
      }),
    ),
  },
  {
    ...strict,
    title: 'CardUpdateRequest',
    examples: [
      {
        spending_controls: { allowed_countries: ['USA'] },
        travel_mode: { esim_id: 'esim_01JD3QG2H9Z8Y7X6W5V4T3S2R1' },
      },
    ],
    'x-unknown-hints': {
      status:
        "A card's status is not set here: POST /v1/cards/{id}/activate, /freeze, /unfreeze or /close moves it.",
    },
  },
)
export type CardUpdateBody = Static<typeof CardUpdate>

export const CardReplace = Type.Object(
  {
    reason: Type.Union(
      [
        Type.Literal('lost'),
        Type.Literal('stolen'),
        Type.Literal('damaged'),
        Type.Literal('expiring'),
      ],
      {
        description:
          'lost/stolen close the old card at once; damaged/expiring close it when the new card is activated',
      },
    ),
  },
  { ...strict, title: 'CardReplaceRequest' },
)

export const Shipping = Type.Object(
  {
    status: Type.Union([
      Type.Literal('pending'),
      Type.Literal('shipped'),
      Type.Literal('delivered'),
    ]),
    shipped_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    delivered_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  {
    title: 'CardShipping',
    examples: [
      {
        status: 'delivered',
        shipped_at: '2026-11-03T10:00:00.000Z',
        delivered_at: '2026-11-05T14:20:00.000Z',
      },
    ],
  },
)

export const Card = Type.Object(
  {
    id: Type.String({ description: 'card_ id' }),
    object: Type.Literal('card'),
    cardholder_id: Type.String(),
    account_id: Type.String(),
    program_id: Type.String(),
    form_factor: Type.String(),
    card_type: Type.String(),
    brand: Type.String(),
    status: Type.Union(
      ['pending', 'inactive', 'active', 'frozen', 'expired', 'closed'].map((s) => Type.Literal(s)),
    ),
    last4: Type.Union([Type.String(), Type.Null()], {
      description: 'Null until the processor issues the card',
    }),
    exp_month: Type.Union([Type.Integer(), Type.Null()]),
    exp_year: Type.Union([Type.Integer(), Type.Null()]),
    embossed_name: Type.String(),
    delivery_address: DeliveryAddress,
    shipping: Type.Union([Shipping, Type.Null()], { description: 'Physical cards only' }),
    spending_controls: SpendingControlsView,
    travel_mode: TravelMode,
    pin_set: Type.Boolean({ description: 'Whether a PIN has been set (physical cards)' }),
    replacement_for: Type.Union([Type.String(), Type.Null()]),
    replacement_reason: Type.Union([Type.String(), Type.Null()]),
    replaced_by: Type.Union([Type.String(), Type.Null()]),
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'Card',
    examples: [
      {
        id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M',
        object: 'card',
        cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
        program_id: 'prog_01JD3Q7Y6X5W4V3T2S1R0Q9P8J',
        form_factor: 'physical',
        card_type: 'debit',
        brand: 'visa',
        status: 'active',
        last4: '4821',
        exp_month: 11,
        exp_year: 2029,
        embossed_name: 'ADA LOVELACE',
        delivery_address: {
          name: 'Ada Lovelace',
          line1: '221B Baker Street',
          line2: null,
          city: 'London',
          state: null,
          postal_code: 'NW1 6XE',
          country: 'GBR',
        },
        shipping: {
          status: 'delivered',
          shipped_at: '2026-11-03T10:00:00.000Z',
          delivered_at: '2026-11-05T14:20:00.000Z',
        },
        spending_controls: {
          spending_limits: [{ amount: 50000, interval: 'daily' }],
          allowed_mccs: [],
          blocked_mccs: ['7995'],
          allowed_countries: [],
          blocked_countries: ['PRK'],
        },
        travel_mode: null,
        pin_set: true,
        replacement_for: null,
        replacement_reason: null,
        replaced_by: null,
        metadata: { nickname: 'Travel card' },
        created_at: '2026-11-02T09:30:00.000Z',
        updated_at: '2026-11-05T18:00:00.000Z',
      },
    ],
  },
)
export type CardView = Static<typeof Card>

export const CardListQuery = Type.Object(
  {
    ...PageQuery,
    cardholder_id: Type.Optional(Type.String({ maxLength: 64 })),
    account_id: Type.Optional(Type.String({ maxLength: 64 })),
    status: Type.Optional(
      Type.Union(
        ['pending', 'inactive', 'active', 'frozen', 'expired', 'closed'].map((s) =>
          Type.Literal(s),
        ),
      ),
    ),
  },
  strict,
)

export const CardIdParams = Type.Object({ card_id: Type.String() })

export const PinKey = Type.Object(
  {
    object: Type.Literal('pin_key'),
    id: Type.String({ description: 'pink_ id' }),
    card_id: Type.String(),
    public_key: Type.Object({
      kty: Type.Literal('RSA'),
      n: Type.String(),
      e: Type.String(),
      alg: Type.Literal('RSA-OAEP-256'),
      use: Type.Literal('enc'),
      kid: Type.String(),
    }),
    public_key_pem: Type.String(),
    algorithm: Type.Literal('RSA-OAEP-256'),
    expires_at: Type.String({ format: 'date-time' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'PinKey',
    // A public key only (abbreviated here); it expires 5 minutes after creation.
    examples: [
      {
        object: 'pin_key',
        id: 'pink_01JD3QE7F8G9H0J1K2M3N4P5Q6',
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M',
        public_key: {
          kty: 'RSA',
          n: 'u1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gunVTLw7onLRnrq0_IzW7yWR7QkrmBL7jTKEn5u-…',
          e: 'AQAB',
          alg: 'RSA-OAEP-256',
          use: 'enc',
          kid: 'pink_01JD3QE7F8G9H0J1K2M3N4P5Q6',
        },
        public_key_pem:
          '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAu1SU1LfVLPHCozMxH2Mo…\n-----END PUBLIC KEY-----\n',
        algorithm: 'RSA-OAEP-256',
        expires_at: '2026-11-06T10:05:00.000Z',
        created_at: '2026-11-06T10:00:00.000Z',
      },
    ],
  },
)

export const PinSubmit = Type.Object(
  {
    pin_key_id: Type.String({ maxLength: 64 }),
    encrypted_pin: Type.String({
      maxLength: 2048,
      description: 'Base64 RSA-OAEP-256 ciphertext of the 4–12 digit PIN, encrypted to the pin-key',
    }),
  },
  { ...strict, title: 'PinRequest' },
)
export type PinSubmitBody = Static<typeof PinSubmit>

export const PinVerification = Type.Object(
  {
    object: Type.Literal('pin_verification'),
    card_id: Type.String(),
    match: Type.Boolean(),
  },
  {
    title: 'PinVerification',
    examples: [
      { object: 'pin_verification', card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M', match: true },
    ],
  },
)

/**
 * The key is checked by the service, not the schema: anything that is not a readable RSA public key of at least
 * 2048 bits (a JWK object or PEM text) is one error, `invalid_public_key`, whatever its JSON type.
 */
export const DetailsRequest = Type.Object(
  {
    public_key: Type.Unsafe<string | Record<string, unknown>>({
      description:
        'Your RSA public key, ≥ 2048 bits: an RSA public JWK object, or PEM text (SPKI or PKCS#1). ' +
        'Anything else (malformed, private, not RSA, under 2048 bits, an exponent other than 65537, a modulus that is even or ' +
        'has a prime factor below 10,000) answers 400 invalid_public_key.',
      examples: [
        { kty: 'RSA', n: '…', e: 'AQAB' },
        '-----BEGIN PUBLIC KEY-----\n…\n-----END PUBLIC KEY-----',
      ],
    }),
  },
  { ...strict, title: 'CardDetailsRequest' },
)

export const CardDetails = Type.Object(
  {
    object: Type.Literal('card_details'),
    card_id: Type.String(),
    encrypted_details: Type.String({
      description: 'Compact JWE (RSA-OAEP-256 + A256GCM) of {number, cvc, exp_month, exp_year}',
    }),
  },
  {
    title: 'CardDetails',
    // Ciphertext only, abbreviated: the number and security code are readable with your private key alone.
    examples: [
      {
        object: 'card_details',
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M',
        encrypted_details:
          'eyJhbGciOiJSU0EtT0FFUC0yNTYiLCJlbmMiOiJBMjU2R0NNIn0.OKOawDo13gRp2ojaHV7LFpZcgV7T6DVZKTyKOMTYUmKoTCVJRgckCL9kiMT03JGe….48V1_ALb6US04U3b.5eym8TW_c8SuK0ltJ3rpYIzOeDQz7TALvtu6UG9oMo4vpzs9tX_EFShS8iB7j6ji….XFBoMYUZodetZdvTiFvSkQ',
      },
    ],
  },
)

export const ShipRequest = Type.Object(
  {
    status: Type.Optional(
      Type.Union([Type.Literal('shipped'), Type.Literal('delivered')], {
        description: 'Default: the next step (pending → shipped → delivered)',
      }),
    ),
  },
  { ...strict, title: 'CardShipRequest' },
)

/** The fields a hosted card details page may show, in the order it shows them. */
export const REVEAL_FIELDS = ['number', 'cvc', 'expiry'] as const
const RevealField = Type.Union([
  Type.Literal('number'),
  Type.Literal('cvc'),
  Type.Literal('expiry'),
])

/**
 * `target_origin` is read by the service (`revealOrigin`), not the schema, so that every way it can be wrong is one
 * `invalid_parameter` naming it.
 */
export const RevealSessionCreate = Type.Object(
  {
    target_origin: Type.String({
      minLength: 1,
      maxLength: 300,
      description:
        'The origin of the page that embeds the iframe (`https://app.example.com`: scheme, host and port, ' +
        'no path). https only; in the sandbox also `http://localhost` (any port). The page may be framed only ' +
        'there (`frame-ancestors`).',
      examples: ['https://app.example.com'],
    }),
    fields: Type.Optional(
      Type.Array(RevealField, {
        minItems: 1,
        maxItems: 3,
        uniqueItems: true,
        description:
          'What the page shows, each at most once, of `number`, `cvc`, `expiry` ' +
          '(default: all three; shown in that order).',
      }),
    ),
    expires_in: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 600,
        description:
          'Seconds until the page stops working if it was not opened (1–600, default 300).',
      }),
    ),
  },
  { ...strict, title: 'CardRevealSessionRequest' },
)
export type RevealSessionCreateBody = Static<typeof RevealSessionCreate>

export const RevealSession = Type.Object(
  {
    object: Type.Literal('card_reveal_session'),
    id: Type.String({ description: 'crs_ id' }),
    card_id: Type.String(),
    url: Type.String({
      description:
        'The hosted page, for an iframe on `target_origin`: it works once. Its token is shown only here ' +
        '(and in a replay of this request under the same Idempotency-Key).',
    }),
    target_origin: Type.String(),
    fields: Type.Array(RevealField),
    expires_at: Type.String({ format: 'date-time' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'CardRevealSession',
    // The token in `url` is a placeholder: a real one opens the card's page once and is shown only here.
    examples: [
      {
        object: 'card_reveal_session',
        id: 'crs_01JD3QF4G5H6J7K8M9N0P1Q2R3',
        card_id: 'card_01JD3Q7Y6X5W4V3T2S1R0Q9P8M',
        url: 'https://api.example.com/card-reveal/EXAMPLEtokenEXAMPLEtokenEXAMPLEtokenEXAMPLE',
        target_origin: 'https://app.example.com',
        fields: ['number', 'cvc', 'expiry'],
        expires_at: '2026-11-06T10:05:00.000Z',
        created_at: '2026-11-06T10:00:00.000Z',
      },
    ],
  },
)
export type RevealSessionView = Static<typeof RevealSession>
