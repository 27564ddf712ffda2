import { html, lines } from '../../lib/html.js'
import { page } from './html.js'

const LINKS: [string, string, string][] = [
  [
    '/docs',
    'API reference',
    'Every operation, field, enum value and example of the REST API, with search.',
  ],
  [
    '/docs/guides',
    'Guides',
    'From a first call to a first card, webhooks, eSIMs and going to production.',
  ],
  [
    '/docs/guides/event-catalogue',
    'Event catalogue',
    'Every event type the service emits and what its payload holds.',
  ],
  [
    '/docs/errors',
    'Error catalogue',
    'Every error code with its status, whether to retry, and what it means.',
  ],
  [
    '/openapi.json',
    'openapi.json',
    'The OpenAPI 3.1 document the reference is rendered from, for code generators.',
  ],
  ['/console', 'Console', 'Manage your organization, clients and webhooks in the browser.'],
]

/** The page at `/`: what the service is, and where to go next. Plain HTML, no script. */
export function landingPage(): string {
  const cards = lines(
    LINKS.map(([href, label, text]) => html`<li><a href="${href}">${label}</a><p>${text}</p></li>`),
  )
  return page(
    'svc: card issuing and eSIM API',
    html`<h1>svc</h1>
<p class="lead">A card-issuing and eSIM platform API: issue cards to cardholders (accounts, ledger, authorizations, disputes, network tokens, 3-D Secure)
and sell eSIM data packages.</p>
<p>One OAuth-protected REST API at <code>/v1</code>, with a sandbox on simulated card processors and a simulated eSIM network.</p>
<ul class="cards">${cards}</ul>`,
    { current: '/' },
  )
}
