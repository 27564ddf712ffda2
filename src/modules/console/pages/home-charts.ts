import type { AppDeps } from '../../../app-deps.js'
import type { Scope } from '../../../http/context.js'
import { html, type Html } from '../../../lib/html.js'
import { formatMoney } from '../../../lib/money-format.js'
import { type CurrencyHoldings, holdingsByCurrency } from '../../accounts/index.js'
import { type AuthorizationActivity, authorizationActivity } from '../../authorizations/index.js'
import { type EndpointHealth, endpointHealth } from '../../webhooks/index.js'

/**
 * The home's activity in pictures: authorizations per day and their approval rate over 30 days, declines by
 * reason, what the accounts hold, and each webhook endpoint's last 7 days. Each picture is an SVG drawn here (no
 * script) with a name for screen readers, and the same figures as a table under it.
 */

const DAY_MS = 24 * 60 * 60 * 1000

export interface HomeActivity {
  authorizations: AuthorizationActivity
  holdings: CurrencyHoldings[]
  endpoints: EndpointHealth[]
}

/** The home's figures, from the modules that own them (three reads at once). */
export async function homeActivity(deps: AppDeps, scope: Scope, now: Date): Promise<HomeActivity> {
  const [authorizations, holdings, endpoints] = await Promise.all([
    authorizationActivity(deps.db, scope, now, 30),
    holdingsByCurrency(deps.db, scope),
    endpointHealth(deps.db, scope, new Date(now.getTime() - 7 * DAY_MS)),
  ])
  return { authorizations, holdings, endpoints }
}

const pct = (part: number, whole: number): string =>
  whole === 0 ? '–' : `${Math.round((part / whole) * 1000) / 10} %`

/** A figure with its SVG and the same data as a table, folded under it. */
function figure(id: string, title: string, summary: string, svg: Html, table: Html): Html {
  return html`<section class="card chart" aria-labelledby="${id}-h">
<h2 id="${id}-h">${title}</h2>
<p class="muted" id="${id}-s">${summary}</p>
${svg}
<details><summary>${title}: the figures as a table</summary>${table}</details>
</section>`
}

/** Authorizations per day, approved stacked under declined, 30 bars. */
function volumeChart(a: AuthorizationActivity): Html {
  const approved = a.days.reduce((n, d) => n + d.approved, 0)
  const declined = a.days.reduce((n, d) => n + d.declined, 0)
  const total = approved + declined
  const max = Math.max(1, ...a.days.map((d) => d.approved + d.declined))
  // Horizontal positions in percent of the width and vertical ones in pixels: the picture takes the card's width
  // without stretching its text or its height.
  const h = 160
  const slot = 100 / a.days.length
  const bars = a.days.map((d, i) => {
    const ok = (d.approved / max) * (h - 20)
    const no = (d.declined / max) * (h - 20)
    const x = `${(i * slot + 0.2).toFixed(2)}%`
    const bw = `${(slot - 0.4).toFixed(2)}%`
    return html`<rect class="ok" x="${x}" y="${(h - ok).toFixed(1)}" width="${bw}" height="${ok.toFixed(1)}"></rect><rect class="no" x="${x}" y="${(h - ok - no).toFixed(1)}" width="${bw}" height="${no.toFixed(1)}"></rect>`
  })
  const amounts = a.approvedAmounts.map((m) => formatMoney(m.amount, m.currency)).join(', ')
  const summary = `${total.toLocaleString('en-US')} authorizations in 30 days, ${pct(approved, total)} approved${amounts ? ` (${amounts})` : ''}. Most on one day: ${max === 1 && total === 0 ? 0 : max}.`
  const svg = html`<svg class="bars" role="img" aria-labelledby="vol-t" aria-describedby="vol-s" width="100%" height="${h}"><title id="vol-t">Authorizations per day, approved and declined, last 30 days</title><line class="axis" x1="0" y1="${h - 0.5}" x2="100%" y2="${h - 0.5}"></line>${bars}</svg>
<p class="legend"><span class="key ok"></span> approved <span class="key no"></span> declined · ${a.days[0]?.day} to ${a.days.at(-1)?.day} (UTC)</p>`
  const table = html`<table><thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="num">Approved</th><th scope="col" class="num">Declined</th><th scope="col" class="num">Approval rate</th></tr></thead><tbody>${a.days.map(
    (d) =>
      html`<tr><td>${d.day}</td><td class="num">${d.approved}</td><td class="num">${d.declined}</td><td class="num">${pct(d.approved, d.approved + d.declined)}</td></tr>`,
  )}</tbody></table>`
  return figure('vol', 'Authorizations, last 30 days', summary, svg, table)
}

/** Horizontal bars, one per row: a label, the bar (its share of the largest) and its figure; x in percent. */
function hbars(
  id: string,
  name: string,
  rows: { label: string; value: number; text: string }[],
): Html {
  const max = Math.max(1, ...rows.map((r) => r.value))
  const rowH = 26
  const h = Math.max(rowH, rows.length * rowH)
  return html`<svg class="hbars" role="img" aria-labelledby="${id}-t" aria-describedby="${id}-s" width="100%" height="${h}"><title id="${id}-t">${name}</title>${rows.map(
    (r, i) => {
      const bar = (r.value / max) * 38
      return html`<text x="0" y="${i * rowH + 17}">${short(r.label, 24)}</text><rect class="no" x="44%" y="${i * rowH + 5}" width="${bar.toFixed(2)}%" height="16"></rect><text x="${(45 + bar).toFixed(2)}%" y="${i * rowH + 17}">${r.text}</text>`
    },
  )}</svg>`
}

const short = (text: string, n: number): string =>
  text.length > n ? `${text.slice(0, n - 1)}…` : text

function declinesChart(a: AuthorizationActivity): Html {
  const total = a.declines.reduce((n, d) => n + d.count, 0)
  const summary =
    total === 0
      ? 'No declines in 30 days.'
      : `${total.toLocaleString('en-US')} declines; the most: ${a.declines[0]!.reason} (${pct(a.declines[0]!.count, total)}).`
  const rows = a.declines.map((d) => ({ label: d.reason, value: d.count, text: String(d.count) }))
  const table = html`<table><thead><tr><th scope="col">Reason</th><th scope="col" class="num">Declines</th><th scope="col" class="num">Share</th></tr></thead><tbody>${a.declines.map(
    (d) =>
      html`<tr><td><code>${d.reason}</code></td><td class="num">${d.count}</td><td class="num">${pct(d.count, total)}</td></tr>`,
  )}</tbody></table>`
  return figure(
    'dec',
    'Declines by reason, last 30 days',
    summary,
    hbars('dec', 'Declines by reason, last 30 days', rows),
    table,
  )
}

function holdingsChart(holdings: CurrencyHoldings[]): Html {
  const summary =
    holdings.length === 0
      ? 'No open account yet.'
      : holdings
          .map(
            (c) =>
              `${formatMoney(c.ledger, c.currency)} in ${c.accounts} account${c.accounts === 1 ? '' : 's'}, ${formatMoney(c.held, c.currency)} on hold`,
          )
          .join('; ')
  const rowH = 30
  const svg = html`<svg class="hbars" role="img" aria-labelledby="bal-t" aria-describedby="bal-s" width="100%" height="${Math.max(rowH, holdings.length * rowH)}"><title id="bal-t">Balances of open accounts by currency: available and on hold</title>${holdings.map(
    (c, i) => {
      const whole = Math.max(1, c.ledger)
      const free = (Math.max(0, c.available) / whole) * 56
      const held = (Math.max(0, c.held) / whole) * 56
      return html`<text x="0" y="${i * rowH + 19}">${c.currency}</text><rect class="ok" x="12%" y="${i * rowH + 6}" width="${free.toFixed(2)}%" height="18"></rect><rect class="no" x="${(12 + free).toFixed(2)}%" y="${i * rowH + 6}" width="${held.toFixed(2)}%" height="18"></rect><text x="70%" y="${i * rowH + 19}">${formatMoney(c.ledger, c.currency)}</text>`
    },
  )}</svg>
<p class="legend"><span class="key ok"></span> available <span class="key no"></span> on hold</p>`
  const table = html`<table><thead><tr><th scope="col">Currency</th><th scope="col" class="num">Accounts</th><th scope="col" class="num">Balance</th><th scope="col" class="num">On hold</th><th scope="col" class="num">Available</th></tr></thead><tbody>${holdings.map(
    (c) =>
      html`<tr><td>${c.currency}</td><td class="num">${c.accounts}</td><td class="num">${formatMoney(c.ledger, c.currency)}</td><td class="num">${formatMoney(c.held, c.currency)}</td><td class="num">${formatMoney(c.available, c.currency)}</td></tr>`,
  )}</tbody></table>`
  return figure('bal', 'Balances held', summary, svg, table)
}

function webhooksChart(endpoints: EndpointHealth[]): Html {
  const failing = endpoints.filter((e) => e.failingSince || e.status === 'disabled').length
  const delivered = endpoints.reduce((n, e) => n + e.delivered, 0)
  const sent = endpoints.reduce((n, e) => n + e.delivered + e.failed, 0)
  const summary =
    endpoints.length === 0
      ? 'No webhook endpoint yet.'
      : `${endpoints.length} endpoint${endpoints.length === 1 ? '' : 's'}, ${failing} failing or disabled; ${sent === 0 ? 'no delivery finished in the last 7 days' : `${pct(delivered, sent)} of the last 7 days' deliveries delivered`}.`
  const rows = endpoints.map((e) => ({
    label: e.url.replace(/^https?:\/\//, ''),
    value: e.delivered + e.failed + e.pending,
    text:
      e.delivered + e.failed === 0
        ? 'none sent'
        : `${pct(e.delivered, e.delivered + e.failed)} delivered`,
  }))
  const table = html`<table><thead><tr><th scope="col">Endpoint</th><th scope="col">State</th><th scope="col" class="num">Delivered</th><th scope="col" class="num">Failed</th><th scope="col" class="num">Pending</th></tr></thead><tbody>${endpoints.map(
    (e) =>
      html`<tr><td><a href="/console/developers/webhooks/${e.id}">${e.url}</a></td><td>${e.status === 'disabled' ? 'disabled' : e.failingSince ? `failing since ${e.failingSince.toISOString().slice(0, 16).replace('T', ' ')} UTC` : 'healthy'}</td><td class="num">${e.delivered}</td><td class="num">${e.failed}</td><td class="num">${e.pending}</td></tr>`,
  )}</tbody></table>`
  return figure(
    'hook',
    'Webhook health, last 7 days',
    summary,
    hbars('hook', 'Webhook deliveries by endpoint, last 7 days', rows),
    table,
  )
}

/** The four pictures, two per row where the page is wide. */
export function activitySection(a: HomeActivity): Html {
  return html`<div class="charts">${volumeChart(a.authorizations)}${declinesChart(a.authorizations)}${holdingsChart(a.holdings)}${webhooksChart(a.endpoints)}</div>`
}
