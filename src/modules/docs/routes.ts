import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ApiError } from '../../http/errors.js'
import { html, lines, raw } from '../../lib/html.js'
import { type Asset, makeAsset, sendAsset } from './assets.js'
import { errorsPage } from './errors-page.js'
import { GuideLibrary, GUIDE_NAME } from './guides.js'
import { DOCS_CSS, PAGE_CSP, page } from './html.js'
import { landingPage } from './landing.js'
import { REFERENCE_CSP, referencePage } from './reference.js'
import { REFERENCE_CSS, REFERENCE_SCRIPT } from './reference-assets.js'

export interface DocsOptions {
  /** The folder of Markdown guides served at /docs/guides (default: the repository's docs/guides). */
  guidesDir: string
  /** The server's address (`BASE_URL`): the served guides name it where they are written for `http://localhost:8080`. */
  baseUrl: string
}

const PUBLIC_PAGE = { config: { public: true }, schema: { hide: true } } as const

function pageHeaders(reply: FastifyReply, csp: string): FastifyReply {
  return reply
    .header('Content-Security-Policy', csp)
    .header('X-Content-Type-Options', 'nosniff')
    .header('Referrer-Policy', 'no-referrer')
}

function sendPage(reply: FastifyReply, body: string, csp = PAGE_CSP, status = 200): FastifyReply {
  return pageHeaders(reply, csp).code(status).type('text/html; charset=utf-8').send(body)
}

/** A browser asks for HTML; an API client that asks for JSON only keeps the 404 envelope at `/`. */
function wantsJsonOnly(req: FastifyRequest): boolean {
  const accept = String(req.headers.accept ?? '')
  return /\bapplication\/(?:[\w.+-]*\+)?json\b/i.test(accept) && !/\btext\/html\b/i.test(accept)
}

function guideNotFound(name: string): string {
  return page(
    'Guide not found',
    html`<h1>No such guide</h1><p>There is no guide named <code>${name}</code>.
See <a href="/docs/guides">all guides</a>.</p>`,
    { current: '/docs/guides' },
  )
}

/**
 * The human-readable pages: the landing page at `/`, the API reference (rendered on the server from the OpenAPI
 * document), the Markdown guides, and the error catalogue that every `doc_url` points into. None needs a token.
 */
export function registerDocs(app: FastifyInstance, options: DocsOptions): void {
  const guides = new GuideLibrary(options.guidesDir, options.baseUrl)
  const errorsHtml = errorsPage()
  const landingHtml = landingPage()
  // The files the pages load, and the reference page itself (from the finished OpenAPI document): each built and
  // compressed once, on its first request.
  let files: Promise<Map<string, Asset>> | undefined
  const assets = () =>
    (files ??= Promise.all([
      makeAsset('/docs/assets/docs.css', DOCS_CSS, 'text/css; charset=utf-8'),
      makeAsset('/docs/assets/reference.css', REFERENCE_CSS, 'text/css; charset=utf-8'),
      makeAsset('/docs/assets/reference.js', REFERENCE_SCRIPT, 'text/javascript; charset=utf-8'),
    ]).then((list) => new Map(list.map((a) => [a.href.split('?')[0].split('/').pop()!, a]))))
  let reference: Promise<Asset> | undefined
  const referenceAsset = () =>
    (reference ??= assets().then((files) =>
      makeAsset(
        '/docs',
        referencePage(app.swagger() as never, {
          css: [files.get('docs.css')!.href, files.get('reference.css')!.href],
          script: files.get('reference.js')!.href,
        }),
        'text/html; charset=utf-8',
      ),
    ))

  app.get('/', PUBLIC_PAGE, async (req, reply) => {
    if (wantsJsonOnly(req)) throw new ApiError('not_found')
    return sendPage(reply, landingHtml)
  })
  app.get('/docs', PUBLIC_PAGE, async (req, reply) =>
    sendAsset(req, pageHeaders(reply, REFERENCE_CSP), await referenceAsset(), 'revalidate'),
  )
  app.get('/docs/errors', PUBLIC_PAGE, async (_req, reply) => sendPage(reply, errorsHtml))
  app.get<{ Params: { file: string }; Querystring: { v?: string } }>(
    '/docs/assets/:file',
    PUBLIC_PAGE,
    async (req, reply) => {
      const asset = (await assets()).get(req.params.file)
      if (!asset) throw new ApiError('not_found')
      // At its hashed address (`?v=`, how the reference links it) a file never changes: cached for a year.
      const versioned = asset.href.endsWith(`?v=${req.query.v}`)
      return sendAsset(req, reply, asset, versioned ? 'immutable' : 'day')
    },
  )

  app.get('/docs/guides', PUBLIC_PAGE, async (_req, reply) => {
    const list = await guides.list()
    const items = lines(
      list.map(
        (g) =>
          html`<li><a href="/docs/guides/${g.name}">${g.title}</a>${g.summary ? html`<p>${g.summary}</p>` : ''}</li>`,
      ),
    )
    const none = html`<p>No guides yet.</p>`
    return sendPage(
      reply,
      page(
        'Guides · svc',
        html`<h1>Guides</h1>
<p>Step-by-step walks through the API on the sandbox. Every field and error is in the <a href="/docs">API reference</a>.</p>
${list.length ? html`<ul class="cards">${items}</ul>` : none}`,
        { current: '/docs/guides' },
      ),
    )
  })
  app.get<{ Params: { name: string } }>('/docs/guides/:name', PUBLIC_PAGE, async (req, reply) => {
    const { name } = req.params
    // `/docs/guides/first-card.md` (a link written for the repository) is the same guide.
    if (name.endsWith('.md') && GUIDE_NAME.test(name.slice(0, -3)))
      return reply.redirect(`/docs/guides/${name.slice(0, -3)}`, 301)
    const guide = await guides.get(name)
    if (!guide) return sendPage(reply, guideNotFound(name), PAGE_CSP, 404)
    const body = html`<p class="crumbs"><a href="/docs/guides">Guides</a></p>\n${raw(guide.html)}`
    return sendPage(reply, page(`${guide.title} · svc guides`, body, { current: '/docs/guides' }))
  })
}
