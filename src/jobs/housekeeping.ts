import type { AppDeps } from '../app-deps.js'
import { purgeIdempotencyKeys } from '../http/idempotency.js'
import { purgeExpiredCredentials } from '../modules/oauth/repo.js'

/** Periodic clean-up of what has outlived its use: redeemed jtis, expired tokens, old idempotency keys. */
export async function runHousekeeping(deps: AppDeps): Promise<void> {
  const now = deps.clock.now()
  await purgeExpiredCredentials(deps.db, now)
  await purgeIdempotencyKeys(deps)
}
