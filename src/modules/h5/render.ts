import { attrs, html, raw, type Html } from '../../lib/html.js'
import { formatMoney } from '../../lib/money-format.js'
import type { EsimView, PackageView, TopUpView } from '../esim/index.js'
import { countryName } from './countries.js'
import { hiddenFields, type Forms } from './forms.js'
import { BALANCE_CSS, balanceSection } from './render-balance.js'
import { CARD_NOTICES, CARDS_CSS, cardsSection, type Reveal } from './render-cards.js'
import type { EsimCard, Notice, PageData } from './service.js'
import { H5_CSS } from './styles.js'
import type { H5Section } from './types.js'

export type { Forms } from './forms.js'
export type { Reveal } from './render-cards.js'

/** Server-rendered HTML of the hosted page, written with the escaping `html` tag (src/lib/html.ts). */

const DAY_MS = 24 * 60 * 60 * 1000
const dateFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  year: 'numeric',
  timeZone: 'UTC',
})
const timeFormat = new Intl.DateTimeFormat('en-GB', {
  hour: '2-digit',
  minute: '2-digit',
  timeZone: 'UTC',
})

export function formatData(mb: number | null): string {
  if (mb === null) return 'Unlimited'
  if (mb < 1024) return `${mb} MB`
  const gb = mb / 1024
  return `${Number.isInteger(gb) ? gb : gb.toFixed(1)} GB`
}

export interface Chrome {
  title: string
  styleNonce: string
}

/** Line icons drawn inline (no font or file to load, so they look the same on every device). */
const svgIcon = (paths: string) =>
  raw(
    `<svg viewBox="0 0 24 24" width="44" height="44" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true">${paths}</svg>`,
  )
export const ICONS = {
  clock: svgIcon('<circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/>'),
  link: svgIcon(
    '<path d="M10 14a4 4 0 0 0 5.7 0l3-3a4 4 0 0 0-5.7-5.7l-1 1"/><path d="M14 10a4 4 0 0 0-5.7 0l-3 3a4 4 0 0 0 5.7 5.7l1-1"/>',
  ),
  lock: svgIcon(
    '<rect x="5" y="11" width="14" height="10" rx="2"/><path d="M8 11V8a4 4 0 0 1 8 0v3"/>',
  ),
  alert: svgIcon('<path d="M12 3 2 20h20L12 3z"/><path d="M12 10v4M12 17h.01"/>'),
  sim: svgIcon(
    '<path d="M7 3h7l5 5v13H7a2 2 0 0 1-2-2V5a2 2 0 0 1 2-2z"/><rect x="9" y="11" width="7" height="7" rx="1"/>',
  ),
}

const PAGE_CSS = H5_CSS + CARDS_CSS + BALANCE_CSS

function layout(chrome: Chrome, body: Html): string {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="robots" content="noindex, nofollow"><meta name="referrer" content="no-referrer">
<title>${chrome.title}</title><style nonce="${chrome.styleNonce}">${raw(PAGE_CSS)}</style></head>
<body>${body}</body></html>`.text
}

const NOTICES: Record<Notice, [string, string]> = {
  ordered: ['ok', 'Your new eSIM is ready. Install it below.'],
  topped_up: ['ok', 'Data added. It is available right away, nothing to reinstall.'],
  duplicate: ['warn', 'That purchase was already made; nothing was charged twice.'],
  unavailable: ['warn', 'That plan is not on sale right now. Please pick another one.'],
  sold_out: [
    'warn',
    'We are out of eSIMs for a moment. Nothing was charged; please try again later.',
  ],
  pending: [
    'warn',
    'The network is slow to answer. Your eSIM will appear here within a few minutes if the purchase went through.',
  ],
  network: [
    'err',
    'The network could not prepare your eSIM. Nothing was charged; please try again.',
  ],
  top_up_unavailable: ['warn', 'That add-on is no longer available for this eSIM.'],
  insufficient_funds: [
    'warn',
    'Your account does not have enough money for that. Nothing was charged.',
  ],
  payment_unavailable: [
    'err',
    'Your account cannot pay for that right now. Nothing was charged; please ask the app for help.',
  ],
  error: ['err', 'Something went wrong. Nothing was charged; please try again.'],
  ...CARD_NOTICES,
}

export function isNotice(value: unknown): value is Notice {
  return typeof value === 'string' && Object.hasOwn(NOTICES, value)
}

const STATUS_LABEL: Record<string, string> = {
  released: 'Ready to install',
  installed: 'Installed',
  enabled: 'Active',
  disabled: 'Turned off',
  deleted: 'Deleted',
}

function packageBlock(p: EsimView['packages'][number], now: Date, named: boolean): Html {
  const used = p.data_used_mb
  const pct =
    p.data_mb === null ? 0 : Math.min(100, Math.round((used / Math.max(1, p.data_mb)) * 100))
  const left =
    p.data_mb === null ? 'Unlimited data' : `${formatData(p.data_remaining_mb ?? 0)} left`
  const expires = p.expires_at ? new Date(p.expires_at) : null
  const daysLeft = expires
    ? Math.max(0, Math.ceil((expires.getTime() - now.getTime()) / DAY_MS))
    : null
  const validity =
    p.status === 'expired'
      ? `Expired on ${dateFormat.format(expires!)}`
      : expires
        ? `Valid until ${dateFormat.format(expires)} · ${daysLeft} day${daysLeft === 1 ? '' : 's'} left`
        : 'Starts when you first connect'
  return html`<div class="pkg" data-package-id="${p.package_id}">
<div class="usage-row"><span>${named ? html`<b>${p.name}</b>` : 'Data plan'}</span><span class="pill ${p.status}">${p.status}</span></div>
<div class="usage-row"><span><b class="used">${formatData(used)}</b> used${p.data_mb === null ? '' : ` of ${formatData(p.data_mb)}`}</span><span class="left">${left}</span></div>
<progress max="100" value="${pct}" class="${pct >= 80 ? 'low' : ''}" aria-label="Data used: ${pct} percent">${pct}%</progress>
<p class="muted validity">${validity}</p></div>`
}

function offerForm(card: EsimCard, offer: TopUpView, forms: Forms): Html {
  const facts =
    offer.data_mb === null
      ? `Adds ${offer.validity_days} days of unlimited data`
      : `Adds ${formatData(offer.data_mb)}${offer.validity_days > 0 ? ` and ${offer.validity_days} days` : ', same end date'}`
  return html`<form class="offer" method="post" action="${forms.base}/esims/${card.esim.id}/top_ups">${hiddenFields(forms)}
<input type="hidden" name="top_up_id" value="${offer.id}">
<div><b>${offer.name}</b><br><span class="muted">${facts}</span></div>
<button class="btn small primary" type="submit">Add for ${formatMoney(offer.price, offer.currency)}</button></form>`
}

/** Whether data is added on its own (auto top-up from the traveller's account), in one line. */
function autoTopUpNote(esim: EsimView): Html {
  const auto = esim.auto_top_up
  if (!auto) return html``
  const when =
    auto.trigger === 'depleted'
      ? 'when your data runs out'
      : `when you have used ${auto.threshold_pct} % of your data`
  return html`<p class="muted auto-top-up">Auto top-up is on: more data is added ${when}.</p>`
}

/** The alerts the eSIM's settings call for: the usage threshold reached, and the hours left near the end. */
function alertLines(card: EsimCard): Html {
  const { reachedPct, endsInHours } = card.alerts
  const usage =
    reachedPct === null
      ? ''
      : html`<p class="notice warn" data-alert="usage">You have used ${reachedPct} % of this plan's data.</p>`
  const validity =
    endsInHours === null
      ? ''
      : html`<p class="notice warn" data-alert="validity">This eSIM's plan ends in ${endsInHours} hour${endsInHours === 1 ? '' : 's'}.</p>`
  return html`${usage}${validity}`
}

/** `forms`: null unless the page sells (allow_purchases). */
function esimCard(card: EsimCard, forms: Forms | null, now: Date): Html {
  const { esim } = card
  const title = esim.packages[0]?.name ?? 'eSIM'
  const offers =
    forms && card.offers.length > 0
      ? html`<h4>Add data</h4>${card.offers.map((o) => offerForm(card, o, forms))}`
      : ''
  return html`<article class="card esim" data-esim-id="${esim.id}">
<div class="card-head"><div><h3>${title}</h3><p class="muted">ICCID ${esim.iccid.replace(/(\d{4})(?=\d)/g, '$1 ')}</p></div>
<span class="pill ${esim.status}">${STATUS_LABEL[esim.status] ?? esim.status}</span></div>
${esim.packages.map((p) => packageBlock(p, now, esim.packages.length > 1))}
${autoTopUpNote(esim)}
${alertLines(card)}
<div class="install"><a class="btn primary" href="${esim.ios_install_url}" rel="noreferrer">Install on iPhone</a>
<a class="btn" href="${esim.android_install_url}" rel="noreferrer">Install on Android</a></div>
<figure class="qr"><div class="qr-code" role="img" aria-label="QR code to install this eSIM">${raw(card.qrSvg)}</div>
<figcaption>Installing on another phone? Open Settings › Mobile data › Add eSIM and scan this code.</figcaption></figure>
<details><summary>Enter the details by hand</summary><dl>
<dt>SM-DP+ address</dt><dd><code>${esim.smdp_address}</code></dd>
<dt>Activation code</dt><dd><code>${esim.matching_id}</code></dd></dl></details>
${offers}</article>`
}

function coverage(p: PackageView): string {
  if (p.region === 'local') return countryName(p.countries[0])
  return `${p.region === 'global' ? 'Global' : 'Regional'} · ${p.countries.length} countries`
}

function buySection(data: PageData, forms: Forms): Html {
  const options = data.countries.map(
    (c) =>
      html`<option${attrs({ value: c.code, selected: c.code === data.country })}>${c.name}</option>`,
  )
  const plans = data.packages.map(
    (p) => html`<div class="card plan" data-package-id="${p.id}"><div><h3>${p.name}</h3>
<p class="facts">${formatData(p.data_mb)} · ${p.validity_days} days · ${coverage(p)}</p></div>
<form method="post" action="${forms.base}/orders">${hiddenFields(forms)}<input type="hidden" name="package_id" value="${p.id}">
<button class="btn small primary" type="submit">Buy ${formatMoney(p.price, p.currency)}</button></form></div>`,
  )
  const none = html`<p class="muted">No plan is on sale for this destination right now.</p>`
  return html`<section aria-labelledby="buy-h"><h2 id="buy-h">Buy a new eSIM</h2>
<form class="card picker" method="get" action="${forms.base}"><label for="country">Where are you going?</label>
<div class="row"><select id="country" name="country"><option value="">Anywhere (global plans)</option>${options}</select>
<button class="btn small" type="submit">Show plans</button></div></form>
<div class="plans">${plans.length > 0 ? plans : none}</div></section>`
}

/** Who holds the account purchases debit, and what it has: said above the plans when the link names one. */
function payingNote(data: PageData): Html | '' {
  if (!data.payFrom) return ''
  const a = data.payFrom
  return html`<p class="card paying muted">Purchases are paid from your ${a.currency} account: ${formatMoney(a.available_balance, a.currency)} available.</p>`
}

function esimsSection(data: PageData, forms: Forms | null, now: Date): Html {
  const selling = data.allowPurchases && forms ? forms : null
  const empty = data.allowPurchases
    ? 'Pick a plan below to get one in a minute.'
    : 'Your eSIMs will show up here once you have bought one.'
  const cards =
    data.esims.length > 0
      ? data.esims.map((c) => esimCard(c, selling, now))
      : html`<div class="card empty"><div class="icon">${ICONS.sim}</div><h3>No eSIM yet</h3><p class="muted">${empty}</p></div>`
  return html`<section aria-labelledby="esims-h"><h2 id="esims-h">Your eSIMs</h2>${cards}</section>
${selling ? html`${payingNote(data)}${buySection(data, selling)}` : ''}`
}

/** The heading and what the footer says the link shows: a page of one section names it; more is the trip. */
function wording(sections: readonly H5Section[]): {
  eyebrow: string
  heading: string
  shows: string
} {
  if (sections.length === 1 && sections[0] === 'esims')
    return { eyebrow: 'Travel data', heading: 'here are your eSIMs', shows: 'your eSIMs' }
  if (sections.length === 1 && sections[0] === 'cards')
    return { eyebrow: 'Travel cards', heading: 'here are your cards', shows: 'your cards' }
  if (sections.length === 1 && sections[0] === 'balance')
    return { eyebrow: 'Travel money', heading: 'here is your balance', shows: 'your balance' }
  return {
    eyebrow: 'Your trip',
    heading: 'here is everything for your trip',
    shows: 'everything on this page',
  }
}

/** The page title, by the same rule as its heading. */
export function pageTitle(sections: readonly H5Section[]): string {
  return sections.length === 1 && sections[0] === 'esims' ? 'Your eSIMs' : 'Your trip'
}

/**
 * The page: the link's sections in its order. `forms`: null when the page has no form (no purchases, no cards);
 * `reveal`: the card whose details frame is shown, after "Show details".
 */
export function renderPage(
  data: PageData,
  chrome: Chrome,
  forms: Forms | null,
  notice: Notice | null,
  now: Date,
  reveal: Reveal | null = null,
): string {
  const banner = notice
    ? html`<div class="notice ${NOTICES[notice][0]}" role="status">${NOTICES[notice][1]}</div>`
    : ''
  const words = wording(data.sections)
  const parts = data.sections.map((section) => {
    if (section === 'esims') return esimsSection(data, forms, now)
    if (section === 'cards') return forms ? cardsSection(data.cards, forms, reveal) : ''
    return balanceSection(data.accounts)
  })
  return layout(
    chrome,
    html`<main class="wrap">
<header class="top"><p class="eyebrow">${words.eyebrow}</p><h1>Hi ${data.firstName}, ${words.heading}</h1></header>
${banner}${parts}
<footer>This private link works until ${timeFormat.format(data.expiresAt)} UTC. Do not share it: anyone holding it sees ${words.shows}.</footer>
</main>`,
  )
}

/** The friendly dead ends: an expired link (410), an unknown one (404), a refused form (403). */
export function renderMessage(
  chrome: Chrome,
  icon: keyof typeof ICONS,
  heading: string,
  text: string,
): string {
  return layout(
    chrome,
    html`<main class="wrap center"><div class="card empty"><div class="icon">${ICONS[icon]}</div>
<h1>${heading}</h1><p class="muted">${text}</p></div></main>`,
  )
}
