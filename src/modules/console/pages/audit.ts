import { listAudit } from '../../users/index.js'
import { formatTime, pager, table } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage } from '../router.js'
import { idLink } from './id-links.js'

/** The audit log, newest first, 50 a page: an owner reads their organization's, an operator the whole platform's. */
export const auditPage: ConsolePage = {
  name: 'audit',
  register(router) {
    router.get('/console/audit', 'audit', async (ctx) => {
      const before = (ctx.req.query as Record<string, string | undefined>).before
      const operator = ctx.scope === null
      const page = await listAudit(ctx.deps.db, operator ? null : ctx.scope!.organizationId, {
        before,
      })
      return ctx.render({
        title: 'Audit log',
        body: html`<p class="muted">Every change made in the console: who, what, when and from where.</p>
${table({
  caption: operator
    ? 'Console actions on the platform, newest first'
    : 'Console actions of the organization, newest first',
  rows: page.rows,
  empty: 'Nothing recorded yet.',
  columns: [
    { header: 'When', cell: (r) => formatTime(r.at) },
    {
      header: 'Who',
      cell: (r) =>
        r.actor_email ?? (r.actor_user_id ? `${r.actor_user_id} (removed)` : 'Operator API'),
    },
    { header: 'Action', cell: (r) => html`<code>${r.action}</code>` },
    {
      header: 'Object',
      cell: (r) =>
        !r.object_id ? '' : operator ? html`<code>${r.object_id}</code>` : idLink(r.object_id),
    },
    ...(operator
      ? [
          {
            header: 'Organization',
            cell: (r: (typeof page.rows)[number]) => r.organization_id ?? '',
          },
        ]
      : []),
    { header: 'Address', cell: (r) => r.address ?? '' },
  ],
})}
${pager('/console/audit', page.next, !before)}`,
      })
    })
  },
}
