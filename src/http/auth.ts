import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AppDeps } from '../app-deps.js'
import type { Environment } from '../config.js'
import type { Db } from '../db/types.js'
import { safeEqual, sha256Hex } from '../lib/crypto.js'
import { defineHook } from '../lib/slots.js'
import { enforceCapability } from './capability.js'
import { scopeOfRow } from './context.js'
import { ApiError } from './errors.js'
import { clientAddress, ipAllowed } from './ip.js'
import type { RateLimits } from './rate-limit.js'
import { TokenCache } from './token-cache.js'

export const TOKEN_PREFIX: Record<Environment, string> = {
  sandbox: 'at_test_',
  production: 'at_live_',
}

/**
 * What an access token grants, as the token lookup answers it: the token's client, organization, environment,
 * scopes and expiry, its client's status and the IP allowlists of the client and of the organization's network
 * policy for that environment. The oauth module, which owns these tables, answers it (`ACCESS_TOKEN_GRANT`).
 */
export interface AccessTokenGrant {
  client_id: string
  organization_id: string
  environment: Environment
  scopes: string[]
  expires_at: Date
  client_status: string
  client_ips: string[] | null
  org_ips: string[] | null
}

/** Finds what the token with this SHA-256 (hex) grants; undefined when there is no such token. */
export type AccessTokenGrantLookup = (
  db: Db,
  tokenHash: string,
) => Promise<AccessTokenGrant | undefined>

/** Asked for every request whose token is not cached: what the access token grants; answered by oauth. */
export const ACCESS_TOKEN_GRANT = defineHook<AccessTokenGrantLookup>(
  'accessTokenGrant',
  async () => undefined,
)

function bearer(req: FastifyRequest): string {
  const header = req.headers.authorization
  if (!header) throw new ApiError('missing_credentials')
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match)
    throw new ApiError('invalid_access_token', {
      message: 'The Authorization header must be "Bearer <access token>".',
    })
  return match[1]
}

/** What the token with this SHA-256 grants: from the token cache, else through the oauth module's lookup (cached). */
async function lookupGrant(
  deps: AppDeps,
  tokens: TokenCache<AccessTokenGrant>,
  tokenHash: string,
): Promise<AccessTokenGrant | undefined> {
  const cached = tokens.get(tokenHash, Date.now())
  if (cached) return cached
  const mark = tokens.mark()
  const row = await deps.hooks.get(ACCESS_TOKEN_GRANT)(deps.db, tokenHash)
  if (row) tokens.put(tokenHash, row, mark, Date.now())
  return row
}

/** Why a grant does not admit a caller at `address` now (client status, expiry, environment, allowlists), or null. */
function refusalOf(
  deps: AppDeps,
  row: AccessTokenGrant | undefined,
  address: string,
): ApiError | null {
  if (
    !row ||
    row.client_status !== 'active' ||
    row.expires_at.getTime() <= deps.clock.now().getTime()
  ) {
    return new ApiError('invalid_access_token')
  }
  if (!deps.config.environments.includes(row.environment)) {
    const message = `This deployment does not serve the ${row.environment} environment.`
    return new ApiError('environment_mismatch', { message })
  }
  if (!ipAllowed(address, row.org_ips) || !ipAllowed(address, row.client_ips))
    return new ApiError('ip_not_allowed')
  return null
}

/**
 * Finds the token (in the token cache, which revocations and allowlist changes clear at once, or through the
 * oauth module's lookup, `ACCESS_TOKEN_GRANT`) and checks client status, expiry, environment and network policy on every request.
 * `req.accessStillGranted` makes the same checks again, for a request that lasts (an event stream).
 */
async function authenticate(
  req: FastifyRequest,
  deps: AppDeps,
  tokens: TokenCache<AccessTokenGrant>,
): Promise<void> {
  const token = bearer(req)
  if (!token.startsWith(TOKEN_PREFIX.sandbox) && !token.startsWith(TOKEN_PREFIX.production)) {
    // The platform operator's token is a secret of its own kind: say which kind /v1 wants, nothing more.
    if (safeEqual(token, deps.config.operatorToken)) {
      throw new ApiError('invalid_access_token', {
        message:
          'This is the operator token, which only /operator/v1 accepts; /v1 takes an access token from POST /oauth/token.',
      })
    }
    throw new ApiError('invalid_access_token', {
      message:
        'Not an access token: /v1 takes the access_token answered by POST /oauth/token (it starts with at_test_ or at_live_).',
    })
  }
  const tokenHash = sha256Hex(token)
  const address = clientAddress(req)
  const row = await lookupGrant(deps, tokens, tokenHash)
  const refusal = refusalOf(deps, row, address)
  if (refusal) throw refusal
  const grant = row as AccessTokenGrant // refusalOf refuses a token it did not find
  req.ctx = {
    requestId: String(req.id),
    ...scopeOfRow(grant),
    clientId: grant.client_id,
    scopes: new Set(grant.scopes),
  }
  req.accessStillGranted = async () =>
    refusalOf(deps, await lookupGrant(deps, tokens, tokenHash), address) === null
}

/**
 * Which gate a request passes. A matched request is judged by its route pattern, never by the raw URL,
 * so a percent-encoded path (`/%6Fperator/...`, `/%761/...`) cannot slip past authentication; an
 * unmatched one by its decoded path, so unknown /v1 paths still authenticate first. `/console` is a gate of
 * its own, kept by the console module (src/modules/console/router.ts): a session cookie, not a token; its
 * sign-in and invitation pages are public, every other console route needs a session and passes a role guard.
 */
function gateOf(req: FastifyRequest): 'operator' | 'v1' | 'console' | null {
  const route = req.is404 ? undefined : req.routeOptions.url
  let path = route ?? req.url.split('?')[0]
  if (route === undefined) {
    try {
      path = decodeURIComponent(path)
    } catch {
      /* a malformed escape: judged as sent */
    }
  }
  if (path === '/operator' || path.startsWith('/operator/')) return 'operator'
  if (path === '/v1' || path.startsWith('/v1/')) return 'v1'
  if (path === '/console' || path.startsWith('/console/')) return 'console'
  return null
}

/** A GET of one object by id ("polling") is limited per (client, actual path): each object has its own budget. */
function pollingPath(req: FastifyRequest): string | null {
  const url = req.routeOptions.url
  if (req.method !== 'GET' || !url) return null
  const last = url.split('/').pop() ?? ''
  return last.startsWith(':') ? req.url.split('?')[0] : null
}

/**
 * The request pipeline before the body is read, in this order: token → rate limit → simulator gate →
 * capability mount → scope. Unknown /v1 paths pass through authentication too, so an unmounted
 * operation and a misspelled path look the same to any caller.
 */
export function installAuth(app: FastifyInstance, deps: AppDeps, limits: RateLimits): void {
  app.decorateRequest('ctx', null as never)
  app.decorateRequest('accessStillGranted', null as never)
  const tokens = new TokenCache<AccessTokenGrant>(deps.config.databaseUrl, deps.log)
  app.addHook('onClose', async () => {
    await tokens.close()
  })
  app.addHook('onRequest', async (req) => {
    const gate = gateOf(req)
    if (gate === 'operator') {
      const header = req.headers.authorization
      if (!header) throw new ApiError('missing_credentials')
      const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
      if (!match)
        throw new ApiError('invalid_access_token', {
          message: 'The Authorization header must be "Bearer <operator token>".',
        })
      if (!safeEqual(match[1], deps.config.operatorToken)) {
        const accessToken =
          match[1].startsWith(TOKEN_PREFIX.sandbox) || match[1].startsWith(TOKEN_PREFIX.production)
        throw new ApiError('invalid_access_token', {
          message: accessToken
            ? 'This is an access token, which only /v1 accepts; /operator/v1 takes the operator token (SVC_OPERATOR_TOKEN).'
            : 'Not the operator token: /operator/v1 takes SVC_OPERATOR_TOKEN (on the embedded default, the file DATA_DIR/operator-token).',
        })
      }
      return
    }
    if (gate !== 'v1') return
    await authenticate(req, deps, tokens)
    const matched = req.routeOptions.url !== undefined && !req.is404
    await limits.consume(req.ctx.clientId, req.ctx.environment, matched ? pollingPath(req) : null)
    if (!matched) return
    const config = req.routeOptions.config
    if (config.simulator && req.ctx.environment !== 'sandbox') throw new ApiError('not_found')
    if (config.capability) await enforceCapability(req, config.capability)
    if (config.scope && !req.ctx.scopes.has(config.scope)) {
      throw new ApiError('insufficient_scope', {
        message: `This operation requires the ${config.scope} scope.`,
      })
    }
  })
}
