/** Every scope a client can hold. */
export const SCOPES = [
  'cardholders:read',
  'cardholders:write',
  'accounts:read',
  'accounts:write',
  'cards:read',
  'cards:write',
  'cards:secrets',
  'transactions:read',
  'transactions:write',
  'webhooks:write',
  'authentications:read',
  'authentications:write',
  'esim:read',
  'esim:write',
  'clients:write',
] as const

export type Scope = (typeof SCOPES)[number]

/** Scopes issued only where the deployment enables the named release (SVC_RELEASES). */
export const RELEASE_GATED_SCOPES: Record<string, string> = {
  'authentications:read': 'three_d_secure',
  'authentications:write': 'three_d_secure',
}

/**
 * Scopes a client holds only when they are named for it: never by default, neither on a new client nor on the demo
 * client. `cards:secrets` sets and verifies PINs; `clients:write` manages the organization's own OAuth clients
 * (`/v1/oauth_clients`), keys included, so whoever holds it can mint credentials.
 */
export const NAMED_ONLY_SCOPES: readonly Scope[] = ['cards:secrets', 'clients:write']

/** Scopes a client gets when the operator does not name any: everything except the named-only ones. */
export const DEFAULT_CLIENT_SCOPES: Scope[] = SCOPES.filter((s) => !NAMED_ONLY_SCOPES.includes(s))

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

export function scopeIssuable(scope: string, releases: ReadonlySet<string>): boolean {
  const release = RELEASE_GATED_SCOPES[scope]
  return release === undefined || releases.has(release)
}
