import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { defineHook } from '../../lib/slots.js'
import * as repo from './repo.js'

/** Lists the cards that spend from one account, in the card module's REST shape. */
export type AccountCardsLister = (
  deps: AppDeps,
  ctx: RequestCtx,
  account: repo.AccountRow,
  page: PageParams,
) => Promise<ListResult<unknown>>

/**
 * `GET /v1/accounts/{id}/cards`, listed by cards. Without the cards module, an account has no cards: an empty
 * page with working cursors.
 */
export const ACCOUNT_CARDS = defineHook<AccountCardsLister>(
  'accountCards',
  (deps, ctx, account, page) =>
    paginate({
      ctx,
      cursors: deps.cursors,
      url: `/v1/accounts/${account.id}/cards`,
      page,
      sortKey: (r: { id: string }) => r.id,
      fetch: async () => [],
      present: (r) => r as unknown,
    }),
)

/** `GET /v1/accounts/{id}/cards`: the account must be the caller's; the listing itself is the cards module's. */
export async function listAccountCards(
  deps: AppDeps,
  ctx: RequestCtx,
  accountId: string,
  page: PageParams,
): Promise<ListResult<unknown>> {
  const row = isId('acct', accountId) ? await repo.findAccount(deps.db, accountId) : undefined
  return deps.hooks.get(ACCOUNT_CARDS)(deps, ctx, requireOwned(row, ctx, 'account_not_found'), page)
}
