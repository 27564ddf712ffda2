import { html, type Html } from '../../../lib/html.js'
import {
  type AuthorizationRuleView,
  type BacktestView,
  listBacktests,
} from '../../authorization-rules/index.js'
import { table } from '../components.js'
import type { PageContext } from '../router.js'
import { actionForm, apiCtx, canChange } from './changes.js'
import { localValue, utcFromLocal } from './developer-shared.js'
import { objectLink, statusBadge, when } from './object-display.js'

/**
 * A rule page's backtests (`/v1/authorization_rules/{id}/backtests`): the form that asks one (a window in UTC), and
 * the rule's backtests with their results; a job replays each, so a new one shows `pending` until it has run.
 */

const DAY_MS = 24 * 60 * 60 * 1000

/** The form's `from` and `to` as the API takes them: RFC 3339, or the text as typed (refused naming the field). */
export function backtestBody(text: (name: string) => string): { from: string; to: string } {
  const at = (name: string) => utcFromLocal(text(name)) ?? text(name).trim()
  return { from: at('from'), to: at('to') }
}

function dateTimeField(name: string, label: string, value: string): Html {
  const id = `backtest-${name}`
  return html`<label for="${id}">${label}<span class="hint" id="${id}-hint">Date and time in UTC.</span></label>
<input id="${id}" name="${name}" type="datetime-local" value="${value}" required aria-describedby="${id}-hint">`
}

function resultsTable(backtests: BacktestView[]): Html {
  const count = (b: BacktestView, pick: (r: NonNullable<BacktestView['results']>) => number) =>
    b.results ? pick(b.results).toLocaleString('en-US') : html`<span class="muted">—</span>`
  return table({
    caption: "This rule's backtests, newest first",
    rows: backtests,
    empty: 'No backtest yet.',
    columns: [
      { header: 'Window', cell: (b) => html`${when(b.from)} to ${when(b.to)}` },
      {
        header: 'Status',
        cell: (b) =>
          html`${statusBadge(b.status)}${b.failure_reason ? html` <code>${b.failure_reason}</code>` : ''}`,
      },
      { header: 'Evaluated', numeric: true, cell: (b) => count(b, (r) => r.evaluated) },
      { header: 'Would decline', numeric: true, cell: (b) => count(b, (r) => r.would_decline) },
      {
        header: 'Of them approved then',
        numeric: true,
        cell: (b) => count(b, (r) => r.approved_would_decline),
      },
    ],
  })
}

/** The first approved authorizations the newest completed backtest would have declined. */
function examplesTable(backtests: BacktestView[]): Html {
  const latest = backtests.find((b) => b.status === 'completed' && b.results)
  if (!latest?.results) return html``
  return table({
    caption: 'Approved then, declined by this rule: examples of the latest completed backtest',
    rows: latest.results.examples,
    empty:
      'None: turning this rule on would have changed no approved authorization of that window.',
    columns: [
      {
        header: 'Authorization',
        cell: (e) => objectLink(e.authorization_id, e.merchant.name ?? e.authorization_id),
      },
      {
        header: 'Amount (minor units)',
        numeric: true,
        cell: (e) => e.amount.toLocaleString('en-US'),
      },
      { header: 'Card', cell: (e) => objectLink(e.card_id) },
      { header: 'At', cell: (e) => when(e.created_at) },
    ],
  })
}

/** The rule page's section: the form (owners and developers) and the backtests with their results. */
export async function backtestsSection(
  ctx: PageContext,
  rule: AuthorizationRuleView,
  typed?: (name: string) => string,
): Promise<Html> {
  const backtests = (await listBacktests(ctx.deps, apiCtx(ctx), rule.id, { limit: 10 })).data
  const now = ctx.deps.clock.now()
  const from = typed?.('from') || localValue(new Date(now.getTime() - 30 * DAY_MS))
  // The form is to the minute: `to` is the next minute, so that what was just authorized is in the window.
  const to = typed?.('to') || localValue(new Date(now.getTime() + 60_000))
  const form = canChange(ctx)
    ? actionForm(
        ctx,
        `/console/authorization-rules/${rule.id}/backtests`,
        'Run a backtest',
        'Run backtest',
        html`<div class="grid2"><div>${dateTimeField('from', 'From (UTC)', from)}</div><div>${dateTimeField('to', 'To (UTC)', to)}</div></div>`,
      )
    : ''
  return html`<section aria-labelledby="backtests-h"><h2 id="backtests-h">Backtests</h2>
<p class="muted">What this rule, as it is now, would have declined among the authorizations of a window (at most 366 days), replayed as each decision saw them (velocity limits with their window's usage at the time). A job runs it: a new backtest is pending until then.</p>
${form}${resultsTable(backtests)}${examplesTable(backtests)}</section>`
}
