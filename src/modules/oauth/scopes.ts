/** Every scope a client can hold. */
export const SCOPES = [
  'cardholders:read', 'cardholders:write',
  'accounts:read', 'accounts:write',
  'cards:read', 'cards:write', 'cards:secrets',
  'transactions:read', 'transactions:write',
  'webhooks:write',
  'authentications:read', 'authentications:write',
  'esim:read', 'esim:write',
] as const

export type Scope = (typeof SCOPES)[number]

/** Scopes issued only where the deployment enables the named release (SVC_RELEASES). */
export const RELEASE_GATED_SCOPES: Record<string, string> = {
  'authentications:read': 'three_d_secure',
  'authentications:write': 'three_d_secure',
}

/** Scopes a client gets when the operator does not name any: everything except card secrets. */
export const DEFAULT_CLIENT_SCOPES: Scope[] = SCOPES.filter((s) => s !== 'cards:secrets')

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value)
}

export function scopeIssuable(scope: string, releases: ReadonlySet<string>): boolean {
  const release = RELEASE_GATED_SCOPES[scope]
  return release === undefined || releases.has(release)
}
