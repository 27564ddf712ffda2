import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { defineHook } from '../../lib/slots.js'
import * as repo from './repo.js'

/** Decides whether the cardholder's address may change only through a KYC attestation. */
export type AddressChangeGuard = (deps: AppDeps, cardholder: repo.CardholderRow) => Promise<boolean>

/** Lists the cards of one cardholder across all its accounts, in the card module's REST shape. */
export type CardholderCardsLister = (
  deps: AppDeps,
  ctx: RequestCtx,
  cardholder: repo.CardholderRow,
  page: PageParams,
) => Promise<ListResult<unknown>>

/** Whether `clockId` names a live sandbox clock of the caller's organization and environment. */
export type ClockOfCaller = (deps: AppDeps, ctx: RequestCtx, clockId: string) => Promise<boolean>

/** Answered by the clocks module; without it, no clock exists (`clock_id` is refused). */
export const CLOCK_OF_CALLER = defineHook<ClockOfCaller>('clockOfCaller', async () => false)

/**
 * Asked before an address change; answered by accounts (a program requiring KYC for it). Without the accounts
 * module, a cardholder holds no account, so no program asks for KYC before an address change.
 */
export const ADDRESS_CHANGE_GUARD = defineHook<AddressChangeGuard>(
  'addressChangeGuard',
  async () => false,
)

/**
 * `GET /v1/cardholders/{id}/cards`, listed by cards. Without the cards module, a cardholder has no cards: an
 * empty page with working cursors.
 */
export const CARDHOLDER_CARDS = defineHook<CardholderCardsLister>(
  'cardholderCards',
  (deps, ctx, cardholder, page) =>
    paginate({
      ctx,
      cursors: deps.cursors,
      url: `/v1/cardholders/${cardholder.id}/cards`,
      page,
      sortKey: (r: { id: string }) => r.id,
      fetch: async () => [],
      present: (r) => r as unknown,
    }),
)

/** Whether the address may change only through a KYC attestation: the rule the runtime's hooks hold (`ADDRESS_CHANGE_GUARD`). */
export async function addressChangeNeedsKyc(
  deps: AppDeps,
  cardholder: repo.CardholderRow,
): Promise<boolean> {
  return deps.hooks.get(ADDRESS_CHANGE_GUARD)(deps, cardholder)
}

/** `GET /v1/cardholders/{id}/cards`: the cardholder must be the caller's; the listing itself is the cards module's. */
export async function listCardholderCards(
  deps: AppDeps,
  ctx: RequestCtx,
  cardholderId: string,
  page: PageParams,
): Promise<ListResult<unknown>> {
  const row = isId('chd', cardholderId)
    ? await repo.findCardholder(deps.db, cardholderId)
    : undefined
  return deps.hooks.get(CARDHOLDER_CARDS)(
    deps,
    ctx,
    requireOwned(row, ctx, 'cardholder_not_found'),
    page,
  )
}
