import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import type { Capability, CapabilityRule } from '../../http/capability.js'
import { accountProgramOf } from './service.js'

/** Mounting rule for operations on `/v1/accounts/{account_id}/…`: the account's program must have the capability. */
export function accountCapability(deps: AppDeps, name: Capability): CapabilityRule {
  return {
    name,
    programOf: (req: FastifyRequest) =>
      accountProgramOf(deps, req.ctx, (req.params as { account_id?: string }).account_id),
  }
}
