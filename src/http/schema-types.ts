import { Type } from 'typebox'

/** A three-letter country code (ISO 3166-1 alpha-3, `src/lib/countries.ts`), either case; stored upper-cased. */
export function CountryCode(description = 'Three-letter country code (ISO 3166-1 alpha-3)') {
  return Type.String({ format: 'country', minLength: 3, maxLength: 3, description })
}

/** A three-letter currency code (ISO 4217), either case; stored upper-cased. */
export function CurrencyCode(description = 'Three-letter currency code (ISO 4217)') {
  return Type.String({ pattern: '^[A-Za-z]{3}$', description })
}

/** Operations without a payload: a body is optional, and any field in it is refused (unknown_parameter). */
export const NoBody = Type.Object({}, { additionalProperties: false })
