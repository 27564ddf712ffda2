import type { AppDeps } from '../../app-deps.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError, isApiError } from '../../http/errors.js'
import {
  changeStatus,
  createOwnRevealSession,
  listCards,
  requireCard,
  type CardView,
} from '../cards/index.js'
import { findProgram } from '../programs/index.js'
import { listTransactions, type TransactionView } from '../transactions/index.js'
import type { LinkRow } from './repo.js'

/**
 * The traveller page's cards section (docs/traveller-page.md): each of the cardholder's cards, masked, with its
 * recent transactions; freeze and unfreeze by the cardholder; card details through a hosted reveal page of the
 * service's own origin. Everything goes through the link: a card of another cardholder reads as unknown.
 */

/** How many of a card's transactions the page lists, newest first. */
export const RECENT_TRANSACTIONS = 10

export interface CardEntry {
  card: CardView
  transactions: TransactionView[]
  /** Whether "Show details" is offered: the link may show details, the program can, the card is active or inactive. */
  canReveal: boolean
}

/** What the page tells the cardholder after a card form; a closed set, so nothing from the request is echoed. */
export type CardNotice = 'card_frozen' | 'card_unfrozen' | 'card_unavailable' | 'card_error'

const SHOWN_STATUSES = new Set(['pending', 'inactive', 'active', 'frozen', 'expired'])

/** The cardholder's cards as the page shows them: every card but closed ones, each with its last transactions. */
export async function loadCards(
  deps: AppDeps,
  ctx: RequestCtx,
  link: LinkRow,
): Promise<CardEntry[]> {
  const page = await listCards(
    deps,
    ctx,
    '/v1/cards',
    { cardholder_id: link.cardholder_id },
    { limit: 100 },
  )
  const entries: CardEntry[] = []
  for (const card of page.data) {
    if (!SHOWN_STATUSES.has(card.status)) continue
    const transactions = await listTransactions(
      deps,
      ctx,
      { card_id: card.id },
      { limit: RECENT_TRANSACTIONS },
    )
    entries.push({
      card,
      transactions: transactions.data,
      canReveal: link.card_details && (await revealable(deps, card)),
    })
  }
  return entries
}

async function revealable(deps: AppDeps, card: { status: string; program_id: string }) {
  if (card.status !== 'active' && card.status !== 'inactive') return false
  const program = await findProgram(deps.db, card.program_id)
  return program?.capabilities.includes('card_details') ?? false
}

/** One of the link's cardholder's cards; any other id (another cardholder's card included) is not found. */
async function ownCard(deps: AppDeps, ctx: RequestCtx, link: LinkRow, cardId: string) {
  const card = await requireCard(deps.db, ctx, cardId)
  if (card.cardholder_id !== link.cardholder_id) throw new ApiError('card_not_found')
  return card
}

/**
 * Freezes or unfreezes one of the cardholder's cards, as `POST /v1/cards/{id}/freeze` does; the event records the
 * cardholder on this link as who did it (`actor: cardholder`, `h5_link_id`).
 */
export async function setOwnCardFrozen(
  deps: AppDeps,
  ctx: RequestCtx,
  link: LinkRow,
  cardId: string,
  op: 'freeze' | 'unfreeze',
): Promise<CardNotice> {
  try {
    const card = await ownCard(deps, ctx, link, cardId)
    await changeStatus(deps, ctx, card.id, op, { kind: 'cardholder', h5LinkId: link.id })
    return op === 'freeze' ? 'card_frozen' : 'card_unfrozen'
  } catch (err) {
    return cardNotice(err)
  }
}

/**
 * A reveal session for one of the cardholder's cards, framed by the service's own origin: answers the path of its
 * page (the page embeds it), or why not. Only on a link that may show details, for a program that can.
 */
export async function revealOwnCard(
  deps: AppDeps,
  ctx: RequestCtx,
  link: LinkRow,
  cardId: string,
): Promise<{ path: string } | CardNotice> {
  try {
    const card = await ownCard(deps, ctx, link, cardId)
    if (!link.card_details || !(await revealable(deps, card))) return 'card_unavailable'
    const session = await createOwnRevealSession(deps, ctx, card.id)
    return { path: new URL(session.url).pathname }
  } catch (err) {
    return cardNotice(err)
  }
}

function cardNotice(err: unknown): CardNotice {
  if (!isApiError(err)) throw err
  if (err.code === 'card_not_found' || err.code === 'card_invalid_state') return 'card_unavailable'
  return 'card_error'
}
