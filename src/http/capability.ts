import type { FastifyRequest } from 'fastify'
import { ApiError } from './errors.js'

export type Capability =
  | 'account_credit'
  | 'account_debit'
  | 'account_status'
  | 'card_pin'
  | 'card_details'
  | 'network_tokens'
  | 'three_d_secure'

/**
 * An optional operation: mounted only when the program behind the request has the capability.
 * `programOf` finds that program from the request (usually via the object in the path); it returns
 * null when the object does not exist, and the handler then answers its own not-found error.
 */
export interface CapabilityRule {
  name: Capability
  programOf: (req: FastifyRequest) => Promise<{ capabilities: readonly string[] } | null>
}

/** Throws the same `not_found` an unknown path answers when the capability is not mounted for this request. */
export async function enforceCapability(req: FastifyRequest, rule: CapabilityRule): Promise<void> {
  const program = await rule.programOf(req)
  if (program && !program.capabilities.includes(rule.name)) throw new ApiError('not_found')
}
