import { randomBytes } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import { Type } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { sameOriginPost } from '../../http/same-origin.js'
import { isNotice, renderMessage, renderPage, type Chrome } from './render.js'
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
import { unitOf } from '../../http/idempotency.js'

const COOKIE = 'svc_h5_csrf'
const NONCE = /^[A-Za-z0-9_-]{16,64}$/
const ID = /^[a-z0-9]+_[0-9A-Z]{26}$/

const H5Link = Type.Object(
  {
    object: Type.Literal('esim_h5_link'),
    id: Type.String({ description: 'h5_ id' }),
    url: Type.String({ description: 'The hosted page; its token is shown only here' }),
    cardholder_id: Type.String(),
    allow_purchases: Type.Boolean(),
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
        allow_purchases: true,
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
      `default-src 'none'; style-src 'nonce-${chrome.styleNonce}'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
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
        'For your security, eSIM links work for 15 minutes. Go back to the app and open your eSIMs again to get a fresh link.',
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

/** `POST /v1/esim/h5_links` and the hosted page it points to (`/h5/{token}`), with its two purchase forms. */
export function registerH5(base: FastifyInstance, deps: AppDeps): void {
  const app = base.withTypeProvider<TypeBoxTypeProvider>()
  app.post(
    '/v1/esim/h5_links',
    {
      config: { scope: 'esim:write', errors: ['cardholder_not_found'] },
      schema: {
        tags: ['eSIM H5'],
        summary: 'Create a hosted eSIM page link for one cardholder',
        description:
          'Create it from your backend when the cardholder asks for the page. The link works for 15 minutes, any number of times; then it shows ' +
          "an expired page (410). The page shows the cardholder's eSIMs with QR codes, one-tap install links, usage and validity, and, with " +
          '`allow_purchases`, lets them buy packages and top-ups (billed to your organization). No API token ever reaches the browser.',
        body: Type.Object(
          {
            cardholder_id: Type.String({ minLength: 1, maxLength: 64 }),
            allow_purchases: Type.Optional(Type.Boolean()),
          },
          { additionalProperties: false },
        ),
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

    scope.get('/h5/:token', { config: { public: true }, schema: { hide: true } }, (req, reply) =>
      withLink(req, reply, async (link) => {
        const query = req.query as Record<string, string | undefined>
        const country =
          typeof query.country === 'string' && /^[A-Z]{3}$/.test(query.country)
            ? query.country
            : null
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
        const forms = link.allow_purchases
          ? {
              base: `/h5/${(req.params as { token: string }).token}`,
              csrf: csrfToken(deps, link.id, secret),
              nonce: () => randomBytes(12).toString('base64url'),
            }
          : null
        const chrome = chromeFor('Your eSIMs')
        return send(
          reply,
          200,
          renderPage(
            data,
            chrome,
            forms,
            isNotice(query.notice) ? query.notice : null,
            deps.clock.now(),
          ),
          chrome,
        )
      }),
    )

    /** Checks every purchase form the same way, then answers with a redirect back to the page (post/redirect/get). */
    const purchase = (
      req: FastifyRequest,
      reply: FastifyReply,
      act: (link: LinkRow, form: Record<string, string>) => Promise<Notice>,
    ) =>
      withLink(req, reply, async (link) => {
        const form = (req.body ?? {}) as Record<string, string>
        if (!link.allow_purchases)
          return deadEnd(reply, 403, 'Purchases are not available on this page.')
        if (
          !sameOriginPost(req, deps.config.baseUrl) ||
          !csrfValid(deps, link.id, cookieValue(req), form.csrf_token) ||
          !NONCE.test(form.nonce ?? '')
        ) {
          return deadEnd(
            reply,
            403,
            'This form has expired or did not come from this page. Reload the page and try again; nothing was charged.',
          )
        }
        const notice = await act(link, form)
        return reply
          .code(303)
          .header('Cache-Control', 'no-store')
          .header('Referrer-Policy', 'no-referrer')
          .redirect(`/h5/${(req.params as { token: string }).token}?notice=${notice}`, 303)
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
