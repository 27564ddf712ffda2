import { html, type Html } from '../../lib/html.js'
import { formatMoney } from '../../lib/money-format.js'
import { type CardView, maskedCard } from '../cards/index.js'
import type { TransactionView } from '../transactions/index.js'
import type { CardEntry, CardNotice } from './cards-section.js'
import { hiddenFields, type Forms } from './forms.js'

/**
 * The cards section of the traveller page (docs/traveller-page.md): each card masked (`Visa •••• 4242`, expiry,
 * status), its freeze or unfreeze form, "Show details" (a form that answers the page with the hosted details frame
 * of that card) and its recent transactions with both amounts. No card number or CVC is ever in this markup: they
 * exist only inside the frame, which the service serves from the processor.
 */

/** The card whose details frame the page shows, and the frame's address (a path of the service's own origin). */
export interface Reveal {
  cardId: string
  src: string
}

export const CARD_NOTICES: Record<CardNotice, [string, string]> = {
  card_frozen: ['ok', 'Your card is frozen. Payments are declined until you unfreeze it.'],
  card_unfrozen: ['ok', 'Your card is active again.'],
  card_unavailable: ['warn', 'That card cannot be changed or shown from this page right now.'],
  card_error: ['err', 'Something went wrong with your card. Please try again in a moment.'],
}

const STATUS_LABEL: Record<string, string> = {
  pending: 'Being issued',
  inactive: 'Not activated',
  active: 'Active',
  frozen: 'Frozen',
  expired: 'Expired',
}

const dayFormat = new Intl.DateTimeFormat('en-GB', {
  day: 'numeric',
  month: 'short',
  timeZone: 'UTC',
})

function expiry(card: CardView): string {
  if (card.exp_month === null || card.exp_year === null) return 'Being issued'
  return `Expires ${String(card.exp_month).padStart(2, '0')}/${card.exp_year}`
}

/** One transaction: the merchant, the day, the account amount and, when the merchant charged another currency, that. */
function transactionRow(txn: TransactionView): Html {
  const sign = txn.type === 'refund' ? '+' : '−'
  const place = [txn.merchant.city, txn.merchant.country].filter(Boolean).join(', ')
  const foreign =
    txn.merchant_currency !== txn.currency
      ? html`<span class="muted merchant-amount">${formatMoney(txn.merchant_amount, txn.merchant_currency)}</span>`
      : ''
  return html`<li class="txn" data-transaction-id="${txn.id}"><div class="txn-what"><b>${txn.merchant.name}</b>
<span class="muted">${dayFormat.format(new Date(txn.created_at))}${place ? ` · ${place}` : ''}${txn.type === 'refund' ? ' · Refund' : ''}</span></div>
<div class="txn-amounts"><span class="account-amount">${sign}${formatMoney(txn.amount, txn.currency)}</span>${foreign}</div></li>`
}

function statusForm(entry: CardEntry, forms: Forms): Html | '' {
  const { card } = entry
  const op = card.status === 'active' ? 'freeze' : card.status === 'frozen' ? 'unfreeze' : null
  if (!op) return ''
  return html`<form method="post" action="${forms.base}/cards/${card.id}/${op}">${hiddenFields(forms)}
<button class="btn small${op === 'unfreeze' ? ' primary' : ''}" type="submit">${op === 'freeze' ? 'Freeze card' : 'Unfreeze card'}</button></form>`
}

function detailsPart(entry: CardEntry, forms: Forms, reveal: Reveal | null): Html | '' {
  const { card } = entry
  if (reveal && reveal.cardId === card.id)
    return html`<div class="reveal"><iframe src="${reveal.src}" title="Card details of ${maskedCard(card)}" class="reveal-frame"></iframe>
<p class="muted">Shown once: to see them again, hide them and ask again.</p>
<a class="btn small" href="${forms.base}">Hide details</a></div>`
  if (!entry.canReveal) return ''
  return html`<form method="post" action="${forms.base}/cards/${card.id}/reveal">${hiddenFields(forms)}
<button class="btn small" type="submit">Show details</button></form>`
}

function cardBlock(entry: CardEntry, forms: Forms, reveal: Reveal | null): Html {
  const { card } = entry
  const transactions =
    entry.transactions.length > 0
      ? html`<ul class="txns">${entry.transactions.map(transactionRow)}</ul>`
      : html`<p class="muted">No payment yet.</p>`
  return html`<article class="card pay-card" data-card-id="${card.id}">
<div class="card-head"><div><h3>${maskedCard(card)}</h3><p class="muted">${expiry(card)} · ${card.form_factor === 'physical' ? 'Physical card' : 'Virtual card'}</p></div>
<span class="pill card-${card.status}">${STATUS_LABEL[card.status] ?? card.status}</span></div>
<div class="card-actions">${statusForm(entry, forms)}${detailsPart(entry, forms, reveal)}</div>
<h4>Recent payments</h4>${transactions}</article>`
}

export function cardsSection(cards: CardEntry[], forms: Forms, reveal: Reveal | null): Html {
  const body =
    cards.length > 0
      ? cards.map((entry) => cardBlock(entry, forms, reveal))
      : html`<div class="card empty"><h3>No card yet</h3><p class="muted">Your cards will show up here once they are issued.</p></div>`
  return html`<section aria-labelledby="cards-h"><h2 id="cards-h">Your cards</h2>${body}</section>`
}

/** The section's rules, added to the page's stylesheet. */
export const CARDS_CSS = `
.card-actions{display:flex;flex-wrap:wrap;gap:10px;margin-top:14px}
.card-actions form{margin:0}
.pill.card-frozen{background:#fff4e0;color:var(--warn)}
.pill.card-active{background:#e7f6ee;color:var(--ok)}
.pill.card-expired{background:#fdecea;color:var(--err)}
.reveal{width:100%}
.reveal-frame{display:block;width:100%;height:290px;border:1px solid var(--line);border-radius:12px;background:#fff}
.txns{list-style:none;margin:0;padding:0}
.txn{display:flex;justify-content:space-between;gap:12px;padding:10px 0;border-top:1px solid var(--line)}
.txn:first-child{border-top:0}
.txn-what{min-width:0;display:flex;flex-direction:column;overflow-wrap:anywhere}
.txn-amounts{flex:none;display:flex;flex-direction:column;align-items:flex-end;font-variant-numeric:tabular-nums}
.account-amount{font-weight:600}
`
