import type { AppDeps } from '../../app-deps.js'
import type { PurgeOptions } from '../../db/purge.js'
import type { Purge } from '../../jobs/registry.js'
import * as repo from './repo.js'

/** How often redeemed assertion ids and expired access tokens are removed. */
export const OAUTH_PURGE_EVERY_MS = 60_000

/** Redeemed jtis are kept only until their assertion expires: after that the assertion is refused on its `exp` alone. */
export function purgeExpiredJtis(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgeJtisExpiredBefore(deps.db, deps.clock.now(), options)
}

/** Access tokens are kept until they expire (a lookup refuses an expired one anyway). */
export function purgeExpiredAccessTokens(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgeAccessTokensExpiredBefore(deps.db, deps.clock.now(), options)
}

export const OAUTH_PURGES: readonly Purge[] = [
  { name: 'oauth_jtis', run: purgeExpiredJtis },
  { name: 'access_tokens', run: purgeExpiredAccessTokens },
]
