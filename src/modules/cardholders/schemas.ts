import { Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { CountryCode } from '../../http/schema-types.js'

export const KYC_STATUSES = ['not_started', 'pending', 'approved', 'rejected', 'expired'] as const
export type KycStatus = (typeof KYC_STATUSES)[number]
export const IDENTITY_DOCUMENT_TYPES = [
  'passport',
  'national_id',
  'driving_licence',
  'residence_permit',
  'tax_id',
  'ssn',
] as const

const E164 = '^\\+[1-9][0-9]{1,14}$'
const text = (max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) })
const nullableText = (max: number, description: string, pattern?: string) =>
  Type.Unsafe<string | null>({
    type: ['string', 'null'],
    minLength: 1,
    maxLength: max,
    ...(pattern ? { pattern } : {}),
    description,
  })

/**
 * Address as sent: line1, city, postal_code and country are required whenever an address is given. The
 * optional parts also take null (as returned), so an address read from a cardholder can be sent back as is.
 */
export const AddressInput = Type.Object(
  {
    line1: text(200),
    line2: Type.Optional(nullableText(200, 'Optional; null or absent when there is none.')),
    city: text(100),
    state: Type.Optional(nullableText(100, 'Optional; null or absent when there is none.')),
    postal_code: text(20),
    country: CountryCode(),
  },
  { additionalProperties: false, title: 'AddressInput' },
)

export const Address = Type.Object(
  {
    line1: Type.String(),
    line2: Type.Union([Type.String(), Type.Null()]),
    city: Type.String(),
    state: Type.Union([Type.String(), Type.Null()]),
    postal_code: Type.String(),
    country: Type.String(),
  },
  {
    title: 'Address',
    examples: [
      {
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

/** Metadata as sent on create: at most 20 keys of ≤ 40 characters, values ≤ 500 characters. */
export const MetadataInput = Type.Record(Type.String(), Type.String({ maxLength: 500 }), {
  maxProperties: 20,
  propertyNames: { minLength: 1, maxLength: 40 },
  description:
    'Your own key-value pairs: at most 20 keys (≤ 40 characters), string values (≤ 500 characters). Not searchable.',
})

/** Metadata on update: merged into what is held; a key set to null or "" is removed. */
export const MetadataPatch = Type.Record(
  Type.String(),
  Type.Unsafe<string | null>({ type: ['string', 'null'], maxLength: 500 }),
  {
    maxProperties: 20,
    propertyNames: { minLength: 1, maxLength: 40 },
    description:
      'Merged into the held metadata; a key set to null or "" is removed. At most 20 keys after the merge.',
  },
)

export const IdentityDocumentInput = Type.Object(
  {
    type: Type.Enum([...IDENTITY_DOCUMENT_TYPES], { description: 'Kind of identity document.' }),
    number: text(64, 'Document number; held encrypted, never returned.'),
  },
  { additionalProperties: false, title: 'IdentityDocumentInput' },
)

export const CardholderCreateRequest = Type.Object(
  {
    type: Type.Literal('individual', {
      description: 'Only `individual` is supported; `business` is refused with invalid_parameter.',
      'x-refusals': {
        business: 'Business cardholders are not supported; type must be individual.',
      },
    }),
    first_name: text(100),
    last_name: text(100),
    email: Type.String({
      format: 'email',
      maxLength: 254,
      description: 'Unique per organization and environment, compared case-insensitively.',
    }),
    phone_number: Type.Optional(
      Type.String({
        pattern: E164,
        description: 'E.164, e.g. +14155550123. Unique per organization and environment.',
      }),
    ),
    reference: Type.Optional(text(128, 'Your own identifier; filterable.')),
    address: Type.Optional(AddressInput),
    identity_document: Type.Optional(IdentityDocumentInput),
    metadata: Type.Optional(MetadataInput),
    clock_id: Type.Optional(
      Type.String({
        maxLength: 64,
        description:
          'Sandbox only: a sandbox clock (clk_…, POST /v1/simulate/clocks) the cardholder and everything under it ' +
          'read (docs/sandbox-clocks.md). In production, or naming no clock of yours, 400 invalid_parameter.',
      }),
    ),
  },
  { additionalProperties: false, title: 'CardholderCreateRequest' },
)

export const CardholderUpdateRequest = Type.Object(
  {
    first_name: Type.Optional(text(100)),
    last_name: Type.Optional(text(100)),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    phone_number: Type.Optional(nullableText(16, 'E.164; null removes it.', E164)),
    reference: Type.Optional(nullableText(128, 'null removes it.')),
    address: Type.Optional(AddressInput),
    identity_document: Type.Optional(IdentityDocumentInput),
    metadata: Type.Optional(MetadataPatch),
  },
  {
    additionalProperties: false,
    title: 'CardholderUpdateRequest',
    description: 'Only supplied fields change.',
  },
)

export const Cardholder = Type.Object(
  {
    id: Type.String({ description: 'chd_ id' }),
    object: Type.Literal('cardholder'),
    type: Type.Literal('individual'),
    first_name: Type.String(),
    last_name: Type.String(),
    email: Type.String(),
    phone_number: Type.Union([Type.String(), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()]),
    address: Type.Union([Address, Type.Null()]),
    kyc_status: Type.Enum([...KYC_STATUSES], {
      description: 'Follows the current KYC attestation; `expired` once its expires_at has passed.',
    }),
    has_identity_document: Type.Boolean({
      description:
        'True once an identity document is held (the document itself is never returned).',
    }),
    metadata: Type.Record(Type.String(), Type.String()),
    created_at: Type.String({ format: 'date-time' }),
    updated_at: Type.String({ format: 'date-time' }),
    clock_id: Type.Optional(
      Type.String({
        description:
          'Sandbox only: the sandbox clock it reads; absent for a cardholder on wall time.',
      }),
    ),
  },
  {
    title: 'Cardholder',
    examples: [
      {
        id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        object: 'cardholder',
        type: 'individual',
        first_name: 'Ada',
        last_name: 'Lovelace',
        email: 'ada.lovelace@example.com',
        phone_number: '+447700900123',
        reference: 'cust-10042',
        address: {
          line1: '221B Baker Street',
          line2: null,
          city: 'London',
          state: null,
          postal_code: 'NW1 6XE',
          country: 'GBR',
        },
        kyc_status: 'approved',
        has_identity_document: true,
        metadata: { segment: 'retail' },
        created_at: '2026-11-01T12:00:00.000Z',
        updated_at: '2026-11-02T09:15:00.000Z',
      },
    ],
  },
)

export const CardholderListQuery = Type.Object(
  {
    ...PageQuery,
    kyc_status: Type.Optional(Type.Enum([...KYC_STATUSES])),
    reference: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
  },
  { additionalProperties: false },
)

export const CardholderParams = Type.Object({ cardholder_id: Type.String() })

export const CardsPageQuery = Type.Object({ ...PageQuery }, { additionalProperties: false })
