import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { revealOwnCard, setOwnCardFrozen } from './cards-section.js'
import type { Reveal } from './render.js'
import type { LinkRow } from './repo.js'
import { linkCtx, type Notice } from './service.js'

const ID = /^[a-z0-9]+_[0-9A-Z]{26}$/

/** What the card forms share with the rest of the page (routes.ts). */
export interface PageKit {
  /** Runs `fn` for a valid link; an unknown or expired one answers its friendly page. */
  withLink(
    req: FastifyRequest,
    reply: FastifyReply,
    fn: (link: LinkRow) => Promise<FastifyReply>,
  ): Promise<FastifyReply>
  /** Whether the form came from this link's page in this browser (origin and CSRF token). */
  formFromPage(req: FastifyRequest, link: LinkRow): boolean
  /** The friendly 403 of a form that did not come from the page. */
  refused(reply: FastifyReply): FastifyReply
  /** Back to the page with a notice (post/redirect/get). */
  back(req: FastifyRequest, reply: FastifyReply, notice: Notice): FastifyReply
  /** The page itself (200), with one card's details frame. */
  showPage(
    req: FastifyRequest,
    reply: FastifyReply,
    link: LinkRow,
    reveal: Reveal,
  ): Promise<FastifyReply>
  /** The friendly 403 of a card form on a link without the cards section. */
  notOnPage(reply: FastifyReply): FastifyReply
}

/**
 * The cards section's forms (docs/traveller-page.md): freeze, unfreeze, and show details. Each is checked as the
 * purchase forms are (same origin, the CSRF token bound to the link and the browser's cookie) and acts only on a card
 * of the link's cardholder. "Show details" answers the page itself (200, never cached) with the card's hosted
 * details frame: its single-use address must not land in the history as a redirect would put it.
 */
export function registerCardForms(scope: FastifyInstance, deps: AppDeps, kit: PageKit): void {
  const cardForm = (
    req: FastifyRequest,
    reply: FastifyReply,
    act: (link: LinkRow, cardId: string) => Promise<FastifyReply>,
  ) =>
    kit.withLink(req, reply, async (link) => {
      if (!link.sections.includes('cards')) return kit.notOnPage(reply)
      if (!kit.formFromPage(req, link)) return kit.refused(reply)
      const cardId = (req.params as { card_id: string }).card_id
      if (!ID.test(cardId)) return kit.back(req, reply, 'card_unavailable')
      return act(link, cardId)
    })

  for (const op of ['freeze', 'unfreeze'] as const) {
    scope.post(
      `/h5/:token/cards/:card_id/${op}`,
      { config: { public: true }, schema: { hide: true } },
      (req, reply) =>
        cardForm(req, reply, async (link, cardId) =>
          kit.back(
            req,
            reply,
            await setOwnCardFrozen(deps, linkCtx(link, String(req.id)), link, cardId, op),
          ),
        ),
    )
  }

  scope.post(
    '/h5/:token/cards/:card_id/reveal',
    { config: { public: true }, schema: { hide: true } },
    (req, reply) =>
      cardForm(req, reply, async (link, cardId) => {
        const outcome = await revealOwnCard(deps, linkCtx(link, String(req.id)), link, cardId)
        if (typeof outcome === 'string') return kit.back(req, reply, outcome)
        return kit.showPage(req, reply, link, { cardId, src: outcome.path })
      }),
  )
}
