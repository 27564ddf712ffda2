import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { listAccounts, type AccountView } from '../accounts/index.js'

/**
 * The traveller page's balance section (docs/traveller-page.md): the cardholder's accounts with what each has
 * available (the ledger balance less pending holds), as `GET /v1/accounts` answers them.
 */
export async function loadBalance(
  deps: AppDeps,
  ctx: RequestCtx,
  cardholderId: string,
): Promise<AccountView[]> {
  const page = await listAccounts(deps, ctx, { cardholder_id: cardholderId, limit: 100 })
  return page.data
}
