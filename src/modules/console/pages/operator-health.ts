import { jobQueueDepth } from '../../../jobs/depth.js'
import { unsettledOrders } from '../../esim/index.js'
import { webhookBacklog } from '../../webhooks/index.js'
import { details, formatTime, table } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage } from '../router.js'
import { ENV_LABEL, HEALTH, ORGANIZATIONS } from './operator-shared.js'

/** "for 3 h 12 min": how long ago `since` was, for a reader scanning for what is stuck. */
function age(since: Date, now: Date): string {
  const minutes = Math.max(0, Math.floor((now.getTime() - since.getTime()) / 60_000))
  if (minutes < 1) return 'under a minute'
  if (minutes < 60) return `${minutes} min`
  const hours = Math.floor(minutes / 60)
  if (hours < 48) return `${hours} h ${minutes % 60} min`
  return `${Math.floor(hours / 24)} days`
}

function since(at: Date | null, now: Date, none: string): Html {
  return at ? html`${formatTime(at)} (${age(at, now)} ago)` : html`${none}`
}

const count = (n: number) => n.toLocaleString('en-US')

/**
 * System health (operators): the job queue by type and state, the webhook backlog and failing endpoints, and the
 * oldest unsettled eSIM order, each read through its owner's published function.
 */
export const operatorHealthPage: ConsolePage = {
  name: 'operator-health',
  register(router) {
    router.get(HEALTH, 'operator', async (ctx) => {
      const now = ctx.deps.clock.now()
      const [jobs, webhooks, orders] = await Promise.all([
        jobQueueDepth(ctx.deps.db, now),
        webhookBacklog(ctx.deps.db),
        unsettledOrders(ctx.deps),
      ])
      const total = (k: 'queued' | 'running' | 'failed') => jobs.reduce((sum, j) => sum + j[k], 0)
      const oldest = orders.oldest
      return ctx.render({
        title: 'System health',
        body: html`<p class="muted">As of ${formatTime(now)}. Reload the page to read it again.</p>
<h2 id="jobs-h">Job queue</h2>
<p>${count(total('queued'))} queued, ${count(total('running'))} running, ${total('failed') > 0 ? html`<span class="warn">${count(total('failed'))} failed</span>` : '0 failed'}.</p>
${table({
  caption: 'Jobs by type and state',
  rows: jobs,
  empty: 'The queue is empty.',
  columns: [
    { header: 'Type', cell: (j) => html`<code>${j.type}</code>` },
    { header: 'Queued', cell: (j) => count(j.queued), numeric: true },
    { header: 'Running', cell: (j) => count(j.running), numeric: true },
    {
      header: 'Failed',
      cell: (j) => (j.failed > 0 ? html`<span class="warn">${count(j.failed)}</span>` : '0'),
      numeric: true,
    },
    { header: 'Oldest due', cell: (j) => since(j.oldestDueAt, now, '—') },
  ],
})}
<p class="muted">Failed: given up after too many errors; they stay in the queue for inspection and never run again.</p>
<h2 id="webhooks-h">Webhooks</h2>
${details([
  [
    'Deliveries pending',
    html`${count(webhooks.pending)}${webhooks.oldestPendingSince ? html`, the oldest since ${since(webhooks.oldestPendingSince, now, '')}` : ''}`,
  ],
  [
    'Endpoints failing',
    webhooks.failingEndpoints > 0
      ? html`<span class="warn">${count(webhooks.failingEndpoints)}</span>, failing since ${since(webhooks.oldestFailingSince, now, '—')} at the earliest`
      : '0',
  ],
  ['Disabled after failing', count(webhooks.disabledForFailing)],
])}
<h2 id="esim-h">eSIM orders</h2>
${details([
  [
    'Unsettled orders',
    orders.count > 0 ? html`<span class="warn">${count(orders.count)}</span>` : '0',
  ],
  [
    'Oldest unsettled',
    oldest
      ? html`<code>${oldest.id}</code> of <a href="${ORGANIZATIONS}/${oldest.organization_id}">${oldest.organization_id}</a> (${ENV_LABEL[oldest.environment] ?? oldest.environment}), created ${since(new Date(oldest.created_at), now, '')}`
      : 'None',
  ],
])}
<p class="muted">An unsettled order waits for the eSIM network's answer; settlement asks again every few seconds.</p>`,
      })
    })
  },
}
