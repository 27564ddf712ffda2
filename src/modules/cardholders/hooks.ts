import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import * as repo from './repo.js'

/** Decides whether the cardholder's address may change only through a KYC attestation. */
export type AddressChangeGuard = (deps: AppDeps, cardholder: repo.CardholderRow) => Promise<boolean>

/** Lists the cards of one cardholder across all its accounts, in the card module's REST shape. */
export type CardholderCardsLister = (deps: AppDeps, ctx: RequestCtx, cardholder: repo.CardholderRow, page: PageParams) => Promise<ListResult<unknown>>

/** By default: the cardholder has an account on a program with address_change_requires_kyc (read from `accounts` once it exists). */
const defaultGuard: AddressChangeGuard = (deps, cardholder) => repo.hasAccountOnAddressKycProgram(deps.db, cardholder.id)

/** Until the cards module registers its lister, a cardholder has no cards: an empty page with working cursors. */
const defaultLister: CardholderCardsLister = (deps, ctx, cardholder, page) => paginate({
  ctx, cursors: deps.cursors, url: `/v1/cardholders/${cardholder.id}/cards`, page,
  sortKey: (r: { id: string }) => r.id,
  fetch: async () => [],
  present: (r) => r as unknown,
})

let guard: AddressChangeGuard = defaultGuard
let lister: CardholderCardsLister = defaultLister

/** The accounts module registers its own rule here; returns the previous guard (tests restore it). */
export function setAddressChangeGuard(fn: AddressChangeGuard | null): AddressChangeGuard {
  const previous = guard
  guard = fn ?? defaultGuard
  return previous
}

/** The cards module registers its listing here, so `GET /v1/cardholders/{id}/cards` needs no change when it lands. */
export function setCardholderCardsLister(fn: CardholderCardsLister | null): CardholderCardsLister {
  const previous = lister
  lister = fn ?? defaultLister
  return previous
}

export async function addressChangeNeedsKyc(deps: AppDeps, cardholder: repo.CardholderRow): Promise<boolean> {
  return guard(deps, cardholder)
}

/** `GET /v1/cardholders/{id}/cards`: the cardholder must be the caller's; the listing itself is the cards module's. */
export async function listCardholderCards(deps: AppDeps, ctx: RequestCtx, cardholderId: string, page: PageParams): Promise<ListResult<unknown>> {
  const row = isId('chd', cardholderId) ? await repo.findCardholder(deps.db, cardholderId) : undefined
  return lister(deps, ctx, requireOwned(row, ctx, 'cardholder_not_found'), page)
}
