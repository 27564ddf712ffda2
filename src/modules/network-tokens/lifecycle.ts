import type { ErrorCode } from '../../http/errors.js'

/** Every status a network token can be in (decisions.md, Authorizations, transactions, disputes). */
export type TokenStatus = 'requested' | 'active' | 'suspended' | 'deleted'
export const TOKEN_STATUSES: readonly TokenStatus[] = [
  'requested',
  'active',
  'suspended',
  'deleted',
]

/** Moves on a token: the caller's suspend/resume/delete and the simulated network's activation. */
export type TokenOperation = 'suspend' | 'resume' | 'delete' | 'activate'

export type TokenMove =
  | { ok: true; next: TokenStatus }
  | { ok: false; code: ErrorCode; message: string }

const NEEDS: Record<
  Exclude<TokenOperation, 'delete'>,
  [from: TokenStatus, next: TokenStatus, verb: string]
> = {
  suspend: ['active', 'suspended', 'suspended'],
  resume: ['suspended', 'active', 'resumed'],
  activate: ['requested', 'active', 'activated'],
}

/**
 * The token state table as one pure function. Deleted refuses everything (`token_deleted`, terminal);
 * suspend needs active, resume needs suspended, activation needs requested (`token_invalid_state`);
 * delete works from any other status.
 */
export function planTokenMove(status: TokenStatus, op: TokenOperation): TokenMove {
  if (status === 'deleted')
    return {
      ok: false,
      code: 'token_deleted',
      message: 'The network token is deleted; deletion is terminal.',
    }
  if (op === 'delete') return { ok: true, next: 'deleted' }
  const [from, next, verb] = NEEDS[op]
  if (status === from) return { ok: true, next }
  return {
    ok: false,
    code: 'token_invalid_state',
    message: `Only ${/^[aeiou]/.test(from) ? 'an' : 'a'} ${from} network token can be ${verb}; this one is ${status}.`,
  }
}

/** Whether an authorization presented with a token in this status may proceed (otherwise `token_inactive`). */
export function tokenUsable(status: string): boolean {
  return status === 'active'
}
