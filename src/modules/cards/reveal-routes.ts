import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { AppDeps } from '../../app-deps.js'
import { unitOf } from '../../http/idempotency.js'
import type { FrameHeaders } from './reveal-frame.js'
import {
  renderRevealMessage,
  renderRevealPage,
  revealVariables,
  type PageChrome,
} from './reveal-page.js'
import { REVEAL_SCRIPT } from './reveal-script.js'
import {
  createRevealSession,
  openRevealPage,
  REVEAL_PAGE_PATH,
  serviceOrigin,
  type RevealOutcome,
} from './reveal-sessions.js'
import { CardIdParams, RevealSession, RevealSessionCreate } from './schemas.js'
import { cardProgramOf } from './service.js'

/** The copy buttons' script: a file of the service's own origin, so the page has no inline script. */
export const REVEAL_SCRIPT_PATH = `${REVEAL_PAGE_PATH}/copy.js`

/**
 * Headers of every hosted card details answer: framed only by the session's origin ('none' when there is no known
 * session), nothing loaded but the nonce'd stylesheet and script, never cached, never indexed, no Referer sent on.
 */
function sendPage(
  reply: FastifyReply,
  status: number,
  page: string,
  chrome: PageChrome,
  frameAncestors: string,
): FastifyReply {
  return reply
    .code(status)
    .header(
      'Content-Security-Policy',
      [
        "default-src 'none'",
        `style-src 'nonce-${chrome.nonce}'`,
        `script-src 'nonce-${chrome.nonce}'`,
        "base-uri 'none'",
        "form-action 'none'",
        `frame-ancestors ${frameAncestors}`,
      ].join('; '),
    )
    .header('Cache-Control', 'no-store')
    .header('X-Robots-Tag', 'noindex, nofollow, noarchive')
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(page)
}

/** Status, heading and sentence of each page that shows no card data. */
const MESSAGES: Record<
  Exclude<RevealOutcome['kind'], 'shown'> | 'processor' | 'error',
  [number, string, string]
> = {
  unknown: [
    404,
    'This link does not work',
    'Check that the whole link was used, or ask the app to show the card details again.',
  ],
  used: [
    410,
    'These card details were already shown',
    'For your security this page opens once. Ask the app to show the card details again.',
  ],
  expired: [
    410,
    'This link has expired',
    'For your security this page works for a few minutes only. Ask the app to show the card details again.',
  ],
  frame_refused: [
    403,
    'The card details cannot be shown here',
    'This page opens only inside the app that asked for it.',
  ],
  unavailable: [
    409,
    'The card details are not available',
    "This card's details cannot be shown. Ask the app for help.",
  ],
  processor: [
    503,
    'The card details could not be loaded',
    'Please ask the app to show the card details again in a moment.',
  ],
  error: [500, 'Something went wrong', 'The card details could not be shown. Please try again.'],
}

function headerValue(req: FastifyRequest, name: string): string | undefined {
  const value = req.headers[name]
  return typeof value === 'string' ? value : undefined
}

function frameHeaders(req: FastifyRequest): FrameHeaders {
  return {
    secFetchDest: headerValue(req, 'sec-fetch-dest'),
    secFetchSite: headerValue(req, 'sec-fetch-site'),
    referer: headerValue(req, 'referer'),
    origin: headerValue(req, 'origin'),
  }
}

/** `POST /v1/cards/{id}/reveal_sessions` and the hosted page it points to (`/card-reveal/{token}`), with its script. */
export function registerRevealRoutes(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()

  app.post(
    '/v1/cards/:card_id/reveal_sessions',
    {
      config: {
        scope: 'cards:secrets',
        capability: { name: 'card_details', programOf: (req) => cardProgramOf(deps, req) },
        errors: ['card_not_found', 'card_not_provisioned', 'card_closed', 'card_invalid_state'],
      },
      schema: {
        tags: ['Card secrets'],
        summary: 'Create a hosted page that shows the card details in an iframe on your page',
        description:
          "The answer's `url` is a page served by this service, for an iframe on `target_origin` only " +
          '(`frame-ancestors`): it shows the fields asked for, each with a copy button, and works once, until ' +
          '`expires_at` (`expires_in`, 1–600 s, default 300). The card number goes from the processor to the ' +
          "cardholder's browser and never through your servers. Only an active or inactive card " +
          '(card_not_provisioned, card_invalid_state, card_closed otherwise). The page is styled with the query ' +
          'parameters of its CSS variables (docs/cards.md, "Hosted card details"). Every view is audited and emits ' +
          'card.details_viewed; creating a session is audited and emits nothing.',
        params: CardIdParams,
        body: RevealSessionCreate,
        response: { 201: RevealSession },
      },
    },
    async (req, reply) =>
      reply
        .code(201)
        .send(await createRevealSession(unitOf(req, deps), req.ctx, req.params.card_id, req.body)),
  )

  app.get(
    REVEAL_SCRIPT_PATH,
    { config: { public: true }, schema: { hide: true }, exposeHeadRoute: false },
    (_req, reply) =>
      reply
        .header('Cache-Control', 'public, max-age=300')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Cross-Origin-Resource-Policy', 'same-origin')
        .type('text/javascript; charset=utf-8')
        .send(REVEAL_SCRIPT),
  )

  // GET only: a HEAD (which Fastify would otherwise answer by running this handler) must not use the session.
  app.get(
    `${REVEAL_PAGE_PATH}/:token`,
    { config: { public: true }, schema: { hide: true }, exposeHeadRoute: false },
    async (req, reply) => {
      const chrome: PageChrome = {
        nonce: randomBytes(16).toString('base64'),
        variables: revealVariables((req.query ?? {}) as Record<string, unknown>),
      }
      const message = (kind: keyof typeof MESSAGES, frameAncestors: string) => {
        const [status, heading, text] = MESSAGES[kind]
        return sendPage(
          reply,
          status,
          renderRevealMessage(chrome, heading, text),
          chrome,
          frameAncestors,
        )
      }
      let outcome: RevealOutcome
      try {
        outcome = await openRevealPage(deps, (req.params as { token: string }).token, {
          requestId: String(req.id),
          headers: frameHeaders(req),
        })
      } catch (err) {
        req.log.error({ err }, 'hosted card details page failed')
        return message('error', "'none'")
      }
      if (outcome.kind === 'unknown') return message('unknown', "'none'")
      // A session for the service's own pages (the traveller page) is framed by the service itself: 'self' names
      // the origin the browser reached it at, which is BASE_URL's.
      const target = outcome.session.target_origin
      const ancestors = target === serviceOrigin(deps) ? "'self'" : target
      if (outcome.kind === 'unavailable' && outcome.code.startsWith('processor_'))
        return message('processor', ancestors)
      if (outcome.kind !== 'shown') return message(outcome.kind, ancestors)
      return sendPage(
        reply,
        200,
        renderRevealPage(chrome, outcome.values, REVEAL_SCRIPT_PATH),
        chrome,
        ancestors,
      )
    },
  )
}
