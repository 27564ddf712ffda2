import type { Environment } from '../../config.js'
import type { SessionUser } from '../users/index.js'
import { allowed } from './access.js'
import { flashBox, postForm, type Flash } from './components.js'
import { attrs, html, raw, type Html } from '../../lib/html.js'
import { PAGES } from './nav.js'
import { CONSOLE_CSS } from './styles.js'

/** What a page hands the layout. */
export interface View {
  title: string
  body: Html
  /** Shown above the body; defaults to the flash message the previous action left. */
  flash?: Flash | null
}

/** What the layout knows of the request: who is signed in, where, and the nonce of this response's CSP. */
export interface Chrome {
  nonce: string
  path: string
  csrf: string
  flash: Flash | null
  user: SessionUser | null
  organizationName: string | null
  environment: Environment | null
  environments: readonly Environment[]
  /** The releases switched on (`SVC_RELEASES`): a page of a release that is off is not in the navigation. */
  releases: ReadonlySet<string>
}

function document(chrome: Chrome, title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow"><link rel="icon" href="data:,">
<title>${title} · svc console</title><style nonce="${chrome.nonce}">${raw(CONSOLE_CSS)}</style></head>
<body>${body}</body></html>`.text
}

const ENV_LABEL: Record<Environment, string> = { sandbox: 'Sandbox', production: 'Production' }

function environmentSwitch(chrome: Chrome): Html {
  if (
    !chrome.user ||
    chrome.user.role === 'operator' ||
    !chrome.environment ||
    chrome.environments.length < 2
  ) {
    return chrome.environment ? html`<span>${ENV_LABEL[chrome.environment]}</span>` : html``
  }
  const buttons = chrome.environments.map(
    (e) =>
      html`<button type="submit" name="environment" value="${e}" class="${e}" aria-pressed="${String(e === chrome.environment)}">${ENV_LABEL[e]}</button>`,
  )
  return postForm(
    '/console/environment',
    chrome.csrf,
    html`<input type="hidden" name="return_to" value="${chrome.path}"><div class="env" role="group" aria-label="Environment">${buttons}</div>`,
    { label: 'Environment' },
  )
}

function navigation(chrome: Chrome): Html {
  const role = chrome.user!.role
  const visible = PAGES.filter(
    (p) =>
      p.group &&
      allowed(role, p.area, 'GET') &&
      (p.release === undefined || chrome.releases.has(p.release)) &&
      (p.environment === undefined || p.environment === chrome.environment),
  )
  const link = (p: (typeof PAGES)[number]) => {
    const current = attrs({ href: p.href, 'aria-current': p.href === chrome.path && 'page' })
    return html`<li><a${current}>${p.label}</a></li>`
  }
  const groups = ['main', 'Developers', 'Operator'] as const
  return html`<nav class="side" aria-label="Console">${groups.map((g) => {
    const items = visible.filter((p) => p.group === g)
    if (items.length === 0) return ''
    return g === 'main'
      ? html`<ul>${items.map(link)}</ul>`
      : html`<h2>${g}</h2><ul>${items.map(link)}</ul>`
  })}</nav>`
}

/** A signed-in page: top bar (organization, environment switch, account, sign-out), navigation, main content. */
export function renderPage(chrome: Chrome, view: View): string {
  const user = chrome.user!
  const place = user.role === 'operator' ? 'Platform operator' : (chrome.organizationName ?? '')
  const body = html`<a class="skip" href="#main">Skip to content</a>
<header class="topbar">
<a class="brand" href="/console">svc console<small>${place}</small></a>
${environmentSwitch(chrome)}
${user.role !== 'operator' ? html`<form method="get" action="/console/search" class="top-search" role="search" aria-label="Search the console"><label for="top-search-q" class="visually-hidden">Search by id, email, name, last4, ICCID or reference</label><input id="top-search-q" name="q" type="search" placeholder="Search id, email, name, last4…" maxlength="254" autocomplete="off" spellcheck="false"><button type="submit" class="secondary">Search</button></form>` : ''}
<a href="/console/account">${user.email}</a>
${postForm('/console/sign-out', chrome.csrf, html`<button type="submit" class="linklike">Sign out</button>`)}
</header>
<div class="layout">${navigation(chrome)}
<main id="main"><h1>${view.title}</h1>${flashBox(view.flash === undefined ? chrome.flash : view.flash)}${view.body}</main></div>`
  return document(chrome, view.title, body)
}

/** A page without a session (sign-in, invitation, errors before sign-in): one centred column. */
export function renderPublicPage(chrome: Chrome, view: View): string {
  const body = html`<header class="topbar"><a class="brand" href="/console/sign-in">svc console</a></header>
<main id="main" class="narrow"><h1>${view.title}</h1>${flashBox(view.flash === undefined ? chrome.flash : view.flash)}${view.body}</main>`
  return document(chrome, view.title, body)
}
