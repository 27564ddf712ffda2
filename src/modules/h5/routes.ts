import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { sameOriginPost } from '../../http/same-origin.js'
import { registerCardForms } from './card-routes.js'
import {
  isNotice,
  pageTitle,
  renderMessage,
  renderPage,
  type Chrome,
  type Reveal,
} from './render.js'
import {
  buyPackage,
  buyTopUp,
  createLink,
  csrfToken,
  csrfValid,
  loadPage,
  newCsrfSecret,
  resolveLink,
  type Notice,
} from './service.js'
import type { LinkRow } from './repo.js'
import { H5_SECTIONS } from './sections.js'
import { unitOf } from '../../http/idempotency.js'

const COOKIE = 'svc_h5_csrf'
const NONCE = /^[A-Za-z0-9_-]{16,64}$/
const ID = /^[a-z0-9]+_[0-9A-Z]{26}$/

const Section = Type.Union(
  [Type.Literal('esims'), Type.Literal('cards'), Type.Literal('balance')],
  { description: H5_SECTIONS.join(', ') },
)

const H5LinkCreate = Type.Object(
  {
    cardholder_id: Type.String({ minLength: 1, maxLength: 64 }),
    sections: Type.Optional(
      Type.Array(Type.String({ maxLength: 32 }), {
        maxItems: 10,
        description:
          'What the page shows, in this order: `esims` (default), `cards` (needs `cards:write`), `balance` ' +
          '(needs `accounts:read`). At least one; a section named twice counts once; another name is invalid_parameter',
      }),
    ),
    allow_purchases: Type.Optional(
      Type.Boolean({
        description: 'Sell packages and top-ups on the page (needs the esims section)',
      }),
    ),
    pay_from_account_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          "One of the cardholder's accounts: purchases on the page debit it (converted when the price is in " +
          'another currency), with allow_purchases. Omitted: purchases are billed to your organization',
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'EsimH5LinkCreateRequest',
    examples: [
      {
        cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        sections: ['esims', 'cards', 'balance'],
        allow_purchases: true,
        pay_from_account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
      },
    ],
  },
)

const H5Link = Type.Object(
  {
    object: Type.Literal('esim_h5_link'),
    id: Type.String({ description: 'h5_ id' }),
    url: Type.String({ description: 'The hosted page; its token is shown only here' }),
    cardholder_id: Type.String(),
    sections: Type.Array(Section, { description: 'What the page shows, in order' }),
    allow_purchases: Type.Boolean(),
    pay_from_account_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The account purchases debit; null: billed to your organization',
    }),
    expires_at: Type.String({ format: 'date-time', description: '15 minutes after creation' }),
    created_at: Type.String({ format: 'date-time' }),
  },
  {
    title: 'EsimH5Link',
    // The token in `url` is a placeholder: a real one opens the cardholder's page and is shown only here.
    examples: [
      {
        object: 'esim_h5_link',
        id: 'h5_01JD3QJ5K6M7N8P9Q0R1S2T3V4',
        url: 'https://api.example.com/h5/EXAMPLEtokenEXAMPLEtokenEXAMPLEtokenEXAMPLE',
        cardholder_id: 'chd_01JD3Q7Y6X5W4V3T2S1R0Q9P8N',
        sections: ['esims', 'cards', 'balance'],
        allow_purchases: true,
        pay_from_account_id: 'acct_01JD3Q7Y6X5W4V3T2S1R0Q9P8K',
        expires_at: '2026-12-01T10:15:00.000Z',
        created_at: '2026-12-01T10:00:00.000Z',
      },
    ],
  },
)

function cookieValue(req: FastifyRequest): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=')
    if (name === COOKIE)
      return /^[A-Za-z0-9_-]{32}$/.test(rest.join('=')) ? rest.join('=') : undefined
  }
  return undefined
}

/** Headers of every hosted page: nothing loads from elsewhere, nothing leaks the link through Referer, no framing. */
function send(reply: FastifyReply, status: number, html: string, chrome: Chrome): FastifyReply {
  return reply
    .code(status)
    .header(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'nonce-${chrome.styleNonce}'; img-src data:; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
    )
    .header('Referrer-Policy', 'no-referrer')
    .header('X-Content-Type-Options', 'nosniff')
    .header('X-Frame-Options', 'DENY')
    .header('Cross-Origin-Opener-Policy', 'same-origin')
    .header('Cache-Control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(html)
}

function chromeFor(title: string): Chrome {
  return { title, styleNonce: randomBytes(16).toString('base64') }
}

function deadEnd(reply: FastifyReply, status: 404 | 410 | 403 | 500, text?: string): FastifyReply {
  const chrome = chromeFor('eSIM')
  if (status === 410)
    return send(
      reply,
      410,
      renderMessage(
        chrome,
        'clock',
        'This link has expired',
        'For your security, these links work for 15 minutes. Go back to the app and open this page again to get a fresh link.',
      ),
      chrome,
    )
  if (status === 404)
    return send(
      reply,
      404,
      renderMessage(
        chrome,
        'link',
        'This link does not work',
        'Check that you opened the whole link, or ask the app for a new one.',
      ),
      chrome,
    )
  if (status === 403)
    return send(
      reply,
      403,
      renderMessage(
        chrome,
        'lock',
        'This form could not be sent',
        text ?? 'Reload the page and try again.',
      ),
      chrome,
    )
  return send(
    reply,
    500,
    renderMessage(
      chrome,
      'alert',
      'Something went wrong',
      'Nothing was charged. Please reload the page in a moment.',
    ),
    chrome,
  )
}

/**
 * `POST /v1/esim/h5_links` and the traveller page it points to (`/h5/{token}`), with its two purchase forms; the
 * cards section's forms are in card-routes.ts.
 */
export function registerH5(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/v1/esim/h5_links',
    {
      config: {
        scope: 'esim:write',
        errors: ['cardholder_not_found', 'account_not_found', 'account_cardholder_mismatch'],
      },
      schema: {
        tags: ['eSIM H5'],
        summary: "Create a link to a cardholder's traveller page (eSIMs, cards, balance)",
        description:
          'Create it from your backend when the cardholder asks for the page. The link works for 15 minutes, any number of times; then it shows ' +
          'an expired page (410). `sections` chooses what the page shows, in that order (default `["esims"]`): `esims`, the ' +
          "cardholder's eSIMs with QR codes, one-tap install links, usage and validity, and, with `allow_purchases`, packages and top-ups " +
          "to buy (billed to your organization, or debited from `pay_from_account_id`, one of the cardholder's accounts, converted " +
          "when the currencies differ); `cards` (needs `cards:write`), each of the cardholder's cards masked with its recent payments " +
          'in both currencies, freeze and unfreeze, and, when your client holds `cards:secrets`, "Show details" through a hosted card ' +
          'details page; `balance` (needs `accounts:read`), the available balance of each account. A section named twice counts once. ' +
          'No API token, card number or CVC ever passes through your servers or sits in the page.',
        body: H5LinkCreate,
        response: { 201: H5Link },
      },
    },
    async (req, reply) =>
      reply.code(201).send(await createLink(unitOf(req, deps), req.ctx, req.body)),
  )

  app.register(async (scope) => {
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser(
      'application/x-www-form-urlencoded',
      { parseAs: 'string', bodyLimit: 16 * 1024 },
      (_req, body, done) => {
        done(null, Object.fromEntries(new URLSearchParams(body as string)))
      },
    )
    // Anything but a form is an empty form: it then fails the CSRF check with the friendly page.
    scope.addContentTypeParser(
      '*',
      { parseAs: 'buffer', bodyLimit: 16 * 1024 },
      (_req, _body, done) => done(null, {}),
    )

    const withLink = async (
      req: FastifyRequest,
      reply: FastifyReply,
      fn: (link: LinkRow) => Promise<FastifyReply>,
    ): Promise<FastifyReply> => {
      try {
        const resolved = await resolveLink(deps, (req.params as { token: string }).token)
        if (resolved.status === 'unknown') return deadEnd(reply, 404)
        if (resolved.status === 'expired') return deadEnd(reply, 410)
        return await fn(resolved.link)
      } catch (err) {
        req.log.error({ err }, 'hosted eSIM page failed')
        return deadEnd(reply, 500)
      }
    }

    /** The page for this link: 200, with the forms' CSRF cookie set when the browser has none. */
    const showPage = async (
      req: FastifyRequest,
      reply: FastifyReply,
      link: LinkRow,
      notice: Notice | null,
      reveal: Reveal | null,
    ): Promise<FastifyReply> => {
      const query = (req.query ?? {}) as Record<string, string | undefined>
      const country =
        typeof query.country === 'string' && /^[A-Z]{3}$/.test(query.country) ? query.country : null
      const data = await loadPage(deps, link, String(req.id), country)
      let secret = cookieValue(req)
      if (!secret) {
        secret = newCsrfSecret()
        const secure = deps.config.baseUrl.startsWith('https:') ? '; Secure' : ''
        reply.header(
          'Set-Cookie',
          `${COOKIE}=${secret}; Path=/h5/; HttpOnly; SameSite=Strict; Max-Age=3600${secure}`,
        )
      }
      const forms =
        link.allow_purchases || link.sections.includes('cards')
          ? {
              base: `/h5/${(req.params as { token: string }).token}`,
              csrf: csrfToken(deps, link.id, secret),
              nonce: () => randomBytes(12).toString('base64url'),
            }
          : null
      const chrome = chromeFor(pageTitle(link.sections))
      return send(reply, 200, renderPage(data, chrome, forms, notice, data.now, reveal), chrome)
    }

    scope.get('/h5/:token', { config: { public: true }, schema: { hide: true } }, (req, reply) =>
      withLink(req, reply, (link) => {
        const notice = (req.query as Record<string, unknown>).notice
        return showPage(req, reply, link, isNotice(notice) ? notice : null, null)
      }),
    )

    /** Whether a form comes from this link's page in this browser: same origin, and the CSRF token of its cookie. */
    const formFromPage = (req: FastifyRequest, link: LinkRow): boolean =>
      sameOriginPost(req, deps.config.baseUrl) &&
      csrfValid(
        deps,
        link.id,
        cookieValue(req),
        ((req.body ?? {}) as Record<string, string>).csrf_token,
      )

    const refused = (reply: FastifyReply) =>
      deadEnd(
        reply,
        403,
        'This form has expired or did not come from this page. Reload the page and try again; nothing was charged.',
      )

    /** Back to the page with what happened (post/redirect/get). */
    const back = (req: FastifyRequest, reply: FastifyReply, notice: Notice) =>
      reply
        .code(303)
        .header('Cache-Control', 'no-store')
        .header('Referrer-Policy', 'no-referrer')
        .redirect(`/h5/${(req.params as { token: string }).token}?notice=${notice}`, 303)

    /** Checks every purchase form the same way, then answers with a redirect back to the page. */
    const purchase = (
      req: FastifyRequest,
      reply: FastifyReply,
      act: (link: LinkRow, form: Record<string, string>) => Promise<Notice>,
    ) =>
      withLink(req, reply, async (link) => {
        const form = (req.body ?? {}) as Record<string, string>
        if (!link.allow_purchases)
          return deadEnd(reply, 403, 'Purchases are not available on this page.')
        if (!formFromPage(req, link) || !NONCE.test(form.nonce ?? '')) return refused(reply)
        return back(req, reply, await act(link, form))
      })

    registerCardForms(scope, deps, {
      withLink,
      formFromPage,
      refused,
      back,
      showPage: (req, reply, link, reveal) => showPage(req, reply, link, null, reveal),
      notOnPage: (reply) => deadEnd(reply, 403, 'Cards are not shown on this page.'),
    })

    scope.post(
      '/h5/:token/orders',
      { config: { public: true }, schema: { hide: true } },
      (req, reply) =>
        purchase(req, reply, (link, form) => {
          if (!ID.test(form.package_id ?? '')) return Promise.resolve<Notice>('unavailable')
          return buyPackage(deps, link, String(req.id), form.package_id, form.nonce)
        }),
    )

    scope.post(
      '/h5/:token/esims/:esim_id/top_ups',
      { config: { public: true }, schema: { hide: true } },
      (req, reply) =>
        purchase(req, reply, (link, form) => {
          const esimId = (req.params as { esim_id: string }).esim_id
          if (!ID.test(form.top_up_id ?? '') || !ID.test(esimId))
            return Promise.resolve<Notice>('top_up_unavailable')
          return buyTopUp(deps, link, String(req.id), esimId, form.top_up_id, form.nonce)
        }),
    )
  })
}
