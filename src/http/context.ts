import type { Environment } from '../config.js'

/** Who is calling: resolved once per request from the access token. */
/** Whose data a call acts on: an organization's environment. A request's context is one; a job builds one from its row. */
export interface Scope {
  organizationId: string
  environment: Environment
}

/** The scope a stored row belongs to: what a job acts for (no request, no client, no scopes to fake). */
export function scopeOfRow(row: { organization_id: string; environment: string }): Scope {
  return { organizationId: row.organization_id, environment: row.environment as Environment }
}

export interface RequestCtx extends Scope {
  requestId: string
  clientId: string
  scopes: ReadonlySet<string>
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by authentication on every /v1 request. */
    ctx: RequestCtx
    /**
     * Set by authentication on every /v1 request: whether its token still passes every check it passed when the
     * request began (client not revoked, token not expired, address allowed), asked again by a request that lasts
     * (an event stream); answered from the token cache, which every revocation clears at once.
     */
    accessStillGranted: () => Promise<boolean>
  }
  interface FastifyContextConfig {
    /** Scope the token must hold; omitted for routes any valid token may call. */
    scope?: string
    /** Optional operation mounted only when the request's program has this capability. */
    capability?: import('./capability.js').CapabilityRule
    /** Sandbox-only simulator route: answers the same 404 as an unknown path in production. */
    simulator?: boolean
    /** Routes outside /v1 that still require no authentication (token endpoint, health, docs). */
    public?: boolean
  }
}
