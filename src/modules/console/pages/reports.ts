import type { FastifyReply } from 'fastify'
import type { ApiError } from '../../../http/errors.js'
import {
  createReport,
  downloadReport,
  listReports,
  maxRowsText,
  REPORT_LIMITS,
  REPORT_STATUSES,
  REPORT_TYPES,
  retrieveReport,
  sendReportFile,
  type ReportType,
  type ReportView,
} from '../../reports/index.js'
import {
  cursorPager,
  details,
  field,
  formatTime,
  getForm,
  postForm,
  selectField,
  table,
} from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { apiCtx, canChange, consoleAction, keyField } from './changes.js'
import { filterValue, pageOf, queryText } from './form-input.js'
import { apiView, eventsSection, objectLink, statusBadge } from './object-display.js'
import { errorInWords, invalidField } from './refusals.js'

export const REPORTS = '/console/reports'
const TYPE_LABEL: Record<ReportType, string> = {
  transactions: 'Transactions (captures and refunds)',
  ledger: 'Ledger entries',
  esim_orders: 'eSIM orders (eSIM billing)',
}
const DATE = /^\d{4}-\d{2}-\d{2}$/

interface RequestValues {
  type?: string
  from?: string
  to?: string
}

function day(d: Date): string {
  return d.toISOString().slice(0, 10)
}

async function listPage(
  ctx: PageContext,
  values: RequestValues = {},
  error?: ApiError,
  status = 200,
): Promise<FastifyReply> {
  const after = queryText(ctx, 'after')
  const page = pageOf(ctx)
  const filters = {
    type: filterValue(ctx, 'type', REPORT_TYPES),
    status: filterValue(ctx, 'status', REPORT_STATUSES),
  }
  const reports = await listReports(
    ctx.deps,
    apiCtx(ctx),
    { type: filters.type || undefined, status: filters.status || undefined },
    page,
  )
  const today = ctx.deps.clock.now()
  const monthAgo = new Date(today.getTime() - 30 * 24 * 60 * 60 * 1000)
  return ctx.render(
    {
      title: 'Reports',
      body: html`<p class="muted">CSV reports of a window of time, generated in the background: request one, then download it once it has succeeded.</p>
${
  canChange(ctx)
    ? html`<section class="card" aria-labelledby="request-h"><h2 id="request-h">Request a report</h2>
${error ? errorInWords(ctx, error) : ''}
${postForm(
  REPORTS,
  ctx.csrf,
  html`${keyField()}
${selectField(
  'type',
  'Report',
  REPORT_TYPES.map((t): [string, string] => [t, TYPE_LABEL[t]]),
  values.type ?? 'transactions',
  { id: 'request-type' },
)}
${field({ name: 'from', id: 'request-from', label: 'From (inclusive)', value: values.from ?? day(monthAgo), required: true, hint: 'A date (YYYY-MM-DD, 00:00 UTC).' })}
${field({ name: 'to', id: 'request-to', label: 'To (exclusive)', value: values.to ?? day(new Date(today.getTime() + 24 * 60 * 60 * 1000)), required: true, hint: 'At most 366 days after the start.' })}
<button type="submit" class="primary">Request the report</button>`,
  { label: 'Request a report' },
)}</section>`
    : ''
}
${getForm(
  REPORTS,
  html`<div>${selectField('type', 'Report', [['', 'Any'], ...REPORT_TYPES.map((t): [string, string] => [t, TYPE_LABEL[t]])], filters.type, { id: 'filter-type' })}</div>
<div>${selectField('status', 'Status', [['', 'Any'], ...REPORT_STATUSES.map((s): [string, string] => [s, s])], filters.status, { id: 'filter-status' })}</div>
<div><button type="submit" class="secondary">Filter</button></div>`,
  'Filter reports',
)}
${table({
  caption: 'Reports, newest first',
  rows: reports.data,
  empty: 'No report matches.',
  columns: [
    { header: 'Report', cell: (r: ReportView) => objectLink(r.id) },
    { header: 'Type', cell: (r) => TYPE_LABEL[r.type] ?? r.type },
    {
      header: 'Window',
      cell: (r) => html`${formatTime(new Date(r.from))} to ${formatTime(new Date(r.to))}`,
    },
    { header: 'Status', cell: (r) => statusBadge(r.status) },
    {
      header: 'File',
      cell: (r) =>
        r.status === 'succeeded'
          ? html`<a href="${REPORTS}/${r.id}/download">Download CSV<span class="visually-hidden"> of ${r.id}</span></a>`
          : '',
    },
  ],
})}
${cursorPager(REPORTS, filters, reports.has_more ? reports.next_cursor : null, !after)}`,
    },
    status,
  )
}

async function detailPage(ctx: PageContext, id: string): Promise<FastifyReply> {
  const r = await retrieveReport(ctx.deps, apiCtx(ctx), id)
  return ctx.render({
    title: `Report ${r.id}`,
    body: html`${details([
      ['Status', statusBadge(r.status)],
      ['Type', TYPE_LABEL[r.type] ?? r.type],
      ['From', formatTime(new Date(r.from))],
      ['To', formatTime(new Date(r.to))],
      ['Rows', r.row_count === null ? 'not yet' : r.row_count.toLocaleString('en-US')],
      ['Size', r.size_bytes === null ? 'not yet' : `${r.size_bytes.toLocaleString('en-US')} bytes`],
      [
        'Failure',
        r.failure_reason === 'too_many_rows'
          ? `more than ${maxRowsText(REPORT_LIMITS.maxRows)} rows: ask for a shorter window`
          : r.failure_reason === 'internal_error'
            ? 'generation kept failing: request it again'
            : 'none',
      ],
      ['Requested', formatTime(new Date(r.created_at))],
      ['Completed', r.completed_at ? formatTime(new Date(r.completed_at)) : 'not yet'],
    ])}
${r.status === 'succeeded' ? html`<p><a href="${REPORTS}/${r.id}/download">Download the CSV</a></p>` : r.status === 'pending' ? html`<p class="muted">Generating: reload this page in a moment.</p>` : ''}
${await eventsSection(ctx, r.id, r.created_at)}
${apiView(r)}
<p><a href="${REPORTS}">All reports</a></p>`,
  })
}

/** Reports: the list (type, status), requesting one (a window of days), its status, and the CSV download. */
export const reportPages: ConsolePage = {
  name: 'reports',
  register(router) {
    router.get(REPORTS, 'organization', (ctx) => listPage(ctx))
    router.get(`${REPORTS}/:id`, 'organization', (ctx) =>
      detailPage(ctx, (ctx.req.params as { id: string }).id),
    )
    router.get(`${REPORTS}/:id/download`, 'organization', async (ctx) => {
      return sendReportFile(
        ctx.reply,
        await downloadReport(ctx.deps, apiCtx(ctx), (ctx.req.params as { id: string }).id),
      )
    })

    router.post(REPORTS, 'organization', async (ctx) => {
      const values: RequestValues = {
        type: ctx.text('type'),
        from: ctx.text('from').trim(),
        to: ctx.text('to').trim(),
      }
      const refuse = (error: ApiError) => listPage(ctx, values, error, error.status)
      if (!(REPORT_TYPES as readonly string[]).includes(values.type ?? ''))
        return refuse(invalidField('type', `Choose one of ${REPORT_TYPES.join(', ')}.`))
      for (const name of ['from', 'to'] as const) {
        if (!DATE.test(values[name] ?? '') && Number.isNaN(Date.parse(values[name] ?? '')))
          return refuse(invalidField(name, 'Give a date as YYYY-MM-DD (or an ISO 8601 timestamp).'))
      }
      return consoleAction(
        ctx,
        'report.requested',
        async (unit) => {
          const report = await createReport(unit, apiCtx(ctx), {
            type: values.type,
            from: values.from ?? '',
            to: values.to ?? '',
          } as Parameters<typeof createReport>[2])
          return {
            to: `${REPORTS}/${report.id}`,
            text: `Report ${report.id} requested; it is generated in the background.`,
            objectId: report.id,
          }
        },
        refuse,
      )
    })
  },
}
