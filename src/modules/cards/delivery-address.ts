import { ApiError, fieldErrors, fieldsOf } from '../../http/errors.js'
import type { AddressValue } from '../cardholders/index.js'

/** A delivery address as held and returned: a postal address with the name to deliver to. */
export interface DeliveryAddressValue extends AddressValue {
  name: string
}

export type DeliveryAddressInput =
  | Partial<Record<keyof DeliveryAddressValue, string | null>>
  | null
  | undefined

/** The parts that make an address complete. */
export const REQUIRED_ADDRESS_PARTS = ['name', 'line1', 'city', 'postal_code', 'country'] as const

function filled(value: string | undefined | null): value is string {
  return typeof value === 'string' && value.trim().length > 0
}

/** The complete address of a card request, or `delivery_address_required` naming the first missing part. */
export function requireCompleteAddress(input: DeliveryAddressInput): DeliveryAddressValue {
  if (!input) {
    throw new ApiError('delivery_address_required', {
      param: 'delivery_address',
      message:
        'A complete delivery_address (name, line1, city, postal_code, country) is required on every card, virtual or physical.',
    })
  }
  const missing = REQUIRED_ADDRESS_PARTS.filter((part) => !filled(input[part]))
  if (missing.length > 0) {
    throw new ApiError('delivery_address_required', {
      param: `delivery_address.${missing[0]}`,
      message: `delivery_address is incomplete: missing ${missing.join(', ')}.`,
    })
  }
  return {
    name: input.name!.trim(),
    line1: input.line1!.trim(),
    line2: filled(input.line2) ? input.line2.trim() : null,
    city: input.city!.trim(),
    state: filled(input.state) ? input.state.trim() : null,
    postal_code: input.postal_code!.trim(),
    country: input.country!.toUpperCase(),
  }
}

/** The embossed name of a card request, or `embossed_name_required` when absent or blank. */
export function requireEmbossedName(input: string | null | undefined): string {
  if (!filled(input))
    throw new ApiError('embossed_name_required', {
      param: 'embossed_name',
      message: 'embossed_name is required on every card, virtual or physical.',
    })
  return input.trim()
}

/**
 * The embossed name and the complete address of a card request. One missing answers its own code; both
 * missing answer `invalid_parameter` with one `errors` entry each (the interface's rule for several fields).
 */
export function requireNameAndAddress(body: {
  embossed_name?: string | null
  delivery_address?: DeliveryAddressInput
}): { embossedName: string; deliveryAddress: DeliveryAddressValue } {
  const failures: ApiError[] = []
  const attempt = <T>(check: () => T): T | undefined => {
    try {
      return check()
    } catch (err) {
      if (!(err instanceof ApiError)) throw err
      failures.push(err)
      return undefined
    }
  }
  const embossedName = attempt(() => requireEmbossedName(body.embossed_name))
  const deliveryAddress = attempt(() => requireCompleteAddress(body.delivery_address))
  if (failures.length === 1) throw failures[0]
  if (failures.length > 1)
    throw fieldErrors(
      failures.flatMap(fieldsOf),
      'embossed_name and delivery_address are both required on every card; errors lists each.',
    )
  return { embossedName: embossedName!, deliveryAddress: deliveryAddress! }
}
