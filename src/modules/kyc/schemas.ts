import { Type } from 'typebox'
import { PageQuery } from '../../http/pagination.js'
import { Address, AddressInput } from '../cardholders/index.js'
import { CountryCode } from '../../http/schema-types.js'

export const ATTESTATION_STATUSES = ['approved', 'rejected', 'pending'] as const
export const METHODS = ['document', 'electronic', 'biometric', 'manual'] as const
export const GENDERS = ['female', 'male', 'unspecified'] as const
export const DOCUMENT_KINDS = [
  'passport',
  'national_id',
  'driving_licence',
  'residence_permit',
  'proof_of_address',
  'selfie',
] as const
export const CONTENT_TYPES = ['image/jpeg', 'image/png', 'application/pdf'] as const
export const MAX_DOCUMENTS = 3
export const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024

const text = (max: number, description?: string) =>
  Type.String({ minLength: 1, maxLength: max, ...(description ? { description } : {}) })

export const IdentityInput = Type.Object(
  {
    legal_name: text(200, 'Full legal name as on the identity document.'),
    gender: Type.Optional(Type.Enum([...GENDERS])),
    nationality: Type.Optional(CountryCode()),
    country_of_birth: Type.Optional(CountryCode()),
    document_expires_on: Type.Optional(Type.String({ format: 'date', description: 'YYYY-MM-DD' })),
  },
  {
    additionalProperties: false,
    title: 'KycIdentityInput',
    description:
      'For programs whose processor runs its own identity checks; legal_name is required when identity is given.',
  },
)

export const DocumentInput = Type.Object(
  {
    kind: Type.Enum([...DOCUMENT_KINDS]),
    file_name: text(255),
    content_type: Type.Enum([...CONTENT_TYPES]),
    // No length keywords: the validator would walk up to 28 million characters; documents.ts checks size and alphabet in one pass.
    content: Type.String({
      contentEncoding: 'base64',
      description:
        'The file, base64 encoded (standard alphabet; line breaks ignored); at most 20 MiB decoded.',
    }),
  },
  { additionalProperties: false, title: 'KycDocumentInput' },
)

export const KycAttestationRequest = Type.Object(
  {
    status: Type.Enum([...ATTESTATION_STATUSES], {
      description: 'The reported result; approved allows card issuance.',
    }),
    provider: text(255, 'Who verified the person.'),
    verified_at: Type.String({ format: 'date-time', description: 'When; not in the future.' }),
    provider_reference: Type.Optional(text(255, "The provider's check id.")),
    method: Type.Optional(Type.Enum([...METHODS])),
    expires_at: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'After verified_at. Once it passes, kyc_status becomes expired.',
      }),
    ),
    reference: Type.Optional(text(255, 'Your own label.')),
    identity: Type.Optional(IdentityInput),
    address: Type.Optional(AddressInput),
    documents: Type.Optional(
      Type.Array(DocumentInput, {
        maxItems: MAX_DOCUMENTS,
        description: 'Up to 3 files; stored encrypted, never returned.',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'KycAttestationRequest',
    description:
      'An `address` replaces the cardholder address unless status is rejected: the way to change the address on programs with address_change_requires_kyc.',
  },
)

export const Identity = Type.Object(
  {
    legal_name: Type.String(),
    gender: Type.Union([Type.String(), Type.Null()]),
    nationality: Type.Union([Type.String(), Type.Null()]),
    country_of_birth: Type.Union([Type.String(), Type.Null()]),
    document_expires_on: Type.Union([Type.String(), Type.Null()]),
  },
  {
    title: 'KycIdentity',
    examples: [
      {
        legal_name: 'Augusta Ada King',
        gender: 'female',
        nationality: 'GBR',
        country_of_birth: 'GBR',
        document_expires_on: '2031-05-31',
      },
    ],
  },
)

export const DocumentMetadata = Type.Object(
  {
    kind: Type.String(),
    file_name: Type.String(),
    content_type: Type.String(),
    size_bytes: Type.Integer({ description: 'Decoded size of the file.' }),
    sha256: Type.String({ description: 'Hex SHA-256 of the file.' }),
  },
  {
    title: 'KycDocumentMetadata',
    examples: [
      {
        kind: 'passport',
        file_name: 'passport.jpg',
        content_type: 'image/jpeg',
        size_bytes: 248113,
        sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
      },
    ],
  },
)

export const KycAttestation = Type.Object(
  {
    id: Type.String({ description: 'kyc_ id' }),
    object: Type.Literal('kyc_attestation'),
    cardholder_id: Type.String(),
    status: Type.String(),
    provider: Type.String(),
    provider_reference: Type.Union([Type.String(), Type.Null()]),
    method: Type.Union([Type.String(), Type.Null()]),
    verified_at: Type.String({ format: 'date-time' }),
    expires_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    reference: Type.Union([Type.String(), Type.Null()]),
    identity: Type.Union([Identity, Type.Null()]),
    address: Type.Union([Address, Type.Null()]),
    documents: Type.Array(DocumentMetadata, { description: 'Metadata only: no content, no URL.' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'KycAttestation',
    examples: [
      {
        id: 'kyc_01JD3QA1B2C3D4E5F6G7H8J9K0',
        object: 'kyc_attestation',
        cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        status: 'approved',
        provider: 'Onfido',
        provider_reference: 'chk_5f3c2a91',
        method: 'document',
        verified_at: '2026-11-02T09:10:00.000Z',
        expires_at: '2027-11-02T09:10:00.000Z',
        reference: 'onboarding-2026-11',
        identity: {
          legal_name: 'Augusta Ada King',
          gender: 'female',
          nationality: 'GBR',
          country_of_birth: 'GBR',
          document_expires_on: '2031-05-31',
        },
        address: {
          line1: '221B Baker Street',
          line2: null,
          city: 'London',
          state: null,
          postal_code: 'NW1 6XE',
          country: 'GBR',
        },
        documents: [
          {
            kind: 'passport',
            file_name: 'passport.jpg',
            content_type: 'image/jpeg',
            size_bytes: 248113,
            sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
          },
        ],
        created_at: '2026-11-02T09:15:00.000Z',
      },
    ],
  },
)

export const KycListQuery = Type.Object({ ...PageQuery }, { additionalProperties: false })
export const KycParams = Type.Object({ cardholder_id: Type.String() })
