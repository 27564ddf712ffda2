import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { defineHook } from '../../lib/slots.js'
import type { StoredAuthorization } from './replay.js'

/**
 * One page of a scope's stored authorizations made in `[from, to)` (`from` null: since the first), oldest first (by
 * id, which sorts by creation time), after the id `after`: what a backtest replays. The authorizations table is the
 * authorizations module's, and that module applies the rules (it imports this one), so it answers this hook.
 */
export type StoredAuthorizationsPage = (
  db: Db,
  scope: Scope,
  window: { from: Date | null; to: Date },
  after: string | null,
  limit: number,
) => Promise<StoredAuthorization[]>

/** Asked by backtests; answered by authorizations (`authorizationsToReplay`). No answer: nothing stored. */
export const STORED_AUTHORIZATIONS = defineHook<StoredAuthorizationsPage>(
  'storedAuthorizations',
  async () => [],
)
