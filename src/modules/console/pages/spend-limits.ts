import { html, type Html } from '../../../lib/html.js'
import { cardSpendLimits, type SpendLimitView } from '../../authorizations/index.js'
import { table } from '../components.js'
import type { PageContext } from '../router.js'
import { apiCtx } from './changes.js'
import { money, statusBadge, when } from './object-display.js'
import { windowInWords } from './rule-forms.js'

/**
 * The card page's "Remaining": every limit that applies to the card (its own spending controls, then the velocity
 * limits of the rules that apply), what is used of it now, what is left and when it resets, as
 * `GET /v1/cards/{id}/spend_limits` answers it (authorizations `cardSpendLimits`).
 */

const INTERVALS: Record<string, string> = {
  per_authorization: 'Per authorization',
  daily: 'Daily',
  weekly: 'Weekly',
  monthly: 'Monthly',
  all_time: 'All time',
}

function source(l: SpendLimitView): Html {
  if (l.source.type === 'card_control')
    return html`${INTERVALS[l.source.interval ?? ''] ?? l.source.interval} limit <span class="muted">(the card's own)</span>`
  const shadow = l.source.mode === 'shadow' ? html` ${statusBadge('shadow')}` : ''
  return html`<a href="/console/authorization-rules/${l.source.rule_id}">${l.source.name}</a>${shadow}`
}

function windowOf(l: SpendLimitView): string {
  if (l.window.type === 'per_authorization') return 'each authorization'
  const per = l.aggregate === 'card' ? '' : `, the ${l.aggregate}'s cards together`
  return `${windowInWords(l.window)}${per}`
}

const count = (n: number) => `${n} authorization${n === 1 ? '' : 's'}`

/** Used of limit, one line per limit the row has (an amount, a count, or both). */
function used(l: SpendLimitView): Html {
  const lines: Html[] = []
  if (l.limit_amount !== null)
    lines.push(
      l.used_amount === null
        ? html`at most ${money(l.limit_amount, l.currency)}`
        : html`${money(l.used_amount, l.currency)} of ${money(l.limit_amount, l.currency)}`,
    )
  if (l.limit_count !== null) lines.push(html`${l.used_count ?? 0} of ${count(l.limit_count)}`)
  return html`${lines.map((line, i) => html`${i ? html`<br>` : ''}${line}`)}`
}

function remaining(l: SpendLimitView): Html {
  const lines: Html[] = []
  if (l.remaining_amount !== null) lines.push(html`${money(l.remaining_amount, l.currency)}`)
  if (l.remaining_count !== null) lines.push(html`${count(l.remaining_count)}`)
  return html`${lines.map((line, i) => html`${i ? html`<br>` : ''}${line}`)}`
}

/** The section: a table of the card's limits, or a line saying none applies. */
export async function remainingSection(ctx: PageContext, cardId: string): Promise<Html> {
  const limits = await cardSpendLimits(ctx.deps, apiCtx(ctx), cardId)
  return html`<section aria-labelledby="remaining-h"><h2 id="remaining-h">Remaining</h2>${table({
    caption: 'What is left of each limit on this card, now',
    rows: limits.data,
    empty: 'No spending limit applies to this card.',
    columns: [
      { header: 'Limit', cell: source },
      { header: 'Window', cell: windowOf },
      { header: 'Used', numeric: true, cell: used },
      { header: 'Remaining', numeric: true, cell: remaining },
      {
        header: 'Resets',
        cell: (l) => (l.resets_at ? when(l.resets_at) : html`<span class="muted">—</span>`),
      },
    ],
  })}</section>`
}
