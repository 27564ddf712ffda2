import { Type } from 'typebox'

export const Program = Type.Object({
  id: Type.String({ description: 'prog_ id' }),
  object: Type.Literal('program'),
  name: Type.String(),
  processor: Type.String({ description: 'Adapter name of the card processor (sim_full, sim_basic)' }),
  environment: Type.Union([Type.Literal('sandbox'), Type.Literal('production')]),
  currencies: Type.Array(Type.String(), { description: 'Three-letter currency codes accounts may hold' }),
  form_factors: Type.Array(Type.String()),
  card_types: Type.Array(Type.String()),
  card_brand: Type.String(),
  capabilities: Type.Array(Type.String(), { description: 'Optional operations mounted for this program' }),
  kyc_initial_status: Type.String(),
  one_card_per_cardholder: Type.Boolean(),
  identity_evidence_required: Type.Boolean(),
  address_change_requires_kyc: Type.Boolean(),
  created_at: Type.String({ format: 'date-time' }),
}, { title: 'Program' })
