import { html, type Html } from '../../../lib/html.js'
import type { CardView } from '../../cards/index.js'
import { eventsAbout } from '../../events/index.js'
import { formatMoney, formatTime, table } from '../components.js'
import type { PageContext } from '../router.js'

/**
 * How the object pages (cardholders to disputes, network tokens, 3-D Secure, eSIM, reports, search) show an object
 * and what it relates to: links by id, status badges, money, times, the JSON the API answers, its events.
 */

/** The console page of each kind of object, by id prefix. A page for another kind adds its line here. */
export const OBJECT_PAGES: Record<string, string> = {
  chd: '/console/cardholders',
  acct: '/console/accounts',
  card: '/console/cards',
  auth: '/console/authorizations',
  arl: '/console/authorization-rules',
  txn: '/console/transactions',
  dsp: '/console/disputes',
  ntok: '/console/network-tokens',
  tdsa: '/console/authentications',
  esord: '/console/esim/orders',
  esim: '/console/esims',
  rpt: '/console/reports',
  evt: '/console/developers/events',
  clk: '/console/sandbox/clocks',
}

/** The console page of the object `id` names, or null for an id of a kind without a page. */
export function objectHref(id: string): string | null {
  const prefix = /^([a-z]+)_[0-9A-Za-z]+$/.exec(id)?.[1]
  const base = prefix ? OBJECT_PAGES[prefix] : undefined
  return base ? `${base}/${id}` : null
}

/** An id as a link to its page (its id in code), the bare id when it has no page, or a dash for none. */
export function objectLink(id: string | null | undefined, label?: string): Html {
  if (!id) return html`<span class="muted">—</span>`
  const href = objectHref(id)
  return href ? html`<a href="${href}">${label ?? shortId(id)}</a>` : shortId(id)
}

/**
 * An id shown short (`…M8JZ9Y7BVV90597D`: its end, where ids made close together differ) yet whole in the page:
 * the start is only clipped by the stylesheet, so selecting and copying it copies the full id, and its name for
 * screen readers and tests is the id.
 */
export function shortId(id: string): Html {
  return html`<code class="id" title="${id}">${id}</code>`
}

const TONES: Record<string, 'good' | 'bad' | 'wait'> = {
  active: 'good',
  approved: 'good',
  open: 'good',
  settled: 'good',
  won: 'good',
  delivered: 'good',
  completed: 'good',
  succeeded: 'good',
  running: 'good',
  enabled: 'good',
  installed: 'good',
  released: 'good',
  on_sale: 'good',
  pending: 'wait',
  requested: 'wait',
  unsettled: 'wait',
  suspended: 'wait',
  queued: 'wait',
  declined: 'bad',
  rejected: 'bad',
  closed: 'bad',
  blocked: 'bad',
  lost: 'bad',
  expired: 'bad',
  frozen: 'bad',
  failed: 'bad',
  deleted: 'bad',
  depleted: 'bad',
  withdrawn: 'bad',
  disabled: 'bad',
}

/** A status as a badge (its text always says it; the colour only repeats it: good, waiting, bad or neutral). */
export function statusBadge(status: string | null | undefined): Html {
  if (!status) return html`<span class="muted">—</span>`
  return html`<span class="badge ${TONES[status] ?? 'neutral'}">${status.replace(/_/g, ' ')}</span>`
}

/** An amount in minor units, in its currency's units: `money(1250, 'USD')` is `$12.50 USD`. */
export function money(amount: number, currency: string): string {
  return `${formatMoney(amount, currency)} ${currency}`
}

/** Money the merchant named in its own currency: an authorization's or a transaction's two amounts. */
export interface BothAmounts {
  amount: number
  currency: string
  merchant_amount: number
  merchant_currency: string
}

/** The account-currency amount, with what the merchant named beside it when it was another currency. */
export function amounts(a: BothAmounts): string {
  const own = money(a.amount, a.currency)
  return a.merchant_currency === a.currency
    ? own
    : `${own} (${money(a.merchant_amount, a.merchant_currency)})`
}

/** How a foreign amount was converted, in words: the rate, the markup and its part, who gave the rate and when. */
export function conversionInWords(
  fx: { rate: string; markup_bps: number; fee_amount: number; source: string; rate_at: string },
  from: string,
  to: string,
): Html {
  const markup =
    fx.markup_bps === 0
      ? 'no markup'
      : `markup ${fx.markup_bps / 100} % (${money(fx.fee_amount, to)})`
  // The time is markup of its own (`when`): the words go through the escaping tag, not a plain string.
  return html`${fx.rate} ${to} per ${from}, ${markup}, ${fx.source} rate of ${when(fx.rate_at)}`
}

/** A `<time>` of an ISO string, or a dash. */
export function when(iso: string | null | undefined, now = Date.now()): Html {
  if (!iso) return html`<span class="muted">—</span>`
  const at = new Date(iso)
  return html`${formatTime(at)} <span class="rel">${relativeTime(at.getTime() - now)}</span>`
}

/** A time from now in words: `just now`, `5 min ago`, `3 h ago`, `2 days ago`, `in 10 min`. */
export function relativeTime(ms: number): string {
  const abs = Math.abs(ms)
  const [n, unit] =
    abs < 60_000
      ? [0, '']
      : abs < 3_600_000
        ? [Math.floor(abs / 60_000), 'min']
        : abs < 86_400_000
          ? [Math.floor(abs / 3_600_000), 'h']
          : [Math.floor(abs / 86_400_000), abs < 2 * 86_400_000 ? 'day' : 'days']
  if (n === 0) return 'just now'
  return ms < 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`
}

/** A JSON view of an object (what the API answers for it), for the "as the API shows it" section. */
export function apiView(value: unknown): Html {
  const json = JSON.stringify(value, null, 2)
  return html`<details><summary>As the API shows it</summary><pre class="json">${json}</pre></details>`
}

/** A table of cards (masked: brand and last four), linking each; `withAccount` adds the account each spends from. */
export function cardsTable(caption: string, cards: readonly CardView[], withAccount = false): Html {
  return table({
    caption,
    rows: cards,
    empty: 'No card yet.',
    columns: [
      {
        header: 'Card',
        cell: (k) =>
          objectLink(k.id, k.last4 ? `${k.brand} •••• ${k.last4}` : `${k.brand} (not issued yet)`),
      },
      { header: 'Form', cell: (k) => k.form_factor },
      { header: 'Status', cell: (k) => statusBadge(k.status) },
      ...(withAccount
        ? [{ header: 'Account', cell: (k: CardView) => objectLink(k.account_id) }]
        : []),
    ],
  })
}

/** The object's events (newest first, at most 20), each linking to its event page. */
export async function eventsSection(
  ctx: PageContext,
  objectId: string,
  since: string | Date,
): Promise<Html> {
  const from = new Date(new Date(since).getTime() - 1000)
  const rows = await eventsAbout(ctx.deps.db, ctx.scope!, objectId, from)
  return html`<section aria-labelledby="events-h"><h2 id="events-h">Events</h2>${table({
    caption: 'Events about this object, newest first',
    rows,
    empty: 'No events yet.',
    columns: [
      { header: 'Type', cell: (e) => html`<code>${e.type}</code>` },
      {
        header: 'Event',
        cell: (e) => html`<a href="/console/developers/events/${e.id}"><code>${e.id}</code></a>`,
      },
      { header: 'At', cell: (e) => formatTime(new Date(e.created_at)) },
    ],
  })}</section>`
}
