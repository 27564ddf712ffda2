import type { FastifyReply } from 'fastify'
import type { ApiError } from '../../../http/errors.js'
import {
  getAlertSettings,
  listEsims,
  recordUsage,
  retrieveEsim,
  type EsimSummaryView,
  type EsimView,
} from '../../esim/index.js'
import { cursorPager, details, field, formatTime, getForm, postForm, table } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { volume } from './esim-orders.js'
import { apiCtx, canChange, consoleAction, keyField } from './changes.js'
import { filterValue, pageOf, queryText, wholeNumber } from './form-input.js'
import { eventsSection, objectLink, statusBadge } from './object-display.js'
import { errorInWords, invalidField } from './refusals.js'
import { refuseOutsideSandbox, sandboxSection } from './sandbox.js'

export const ESIMS = '/console/esims'

type Bundle = EsimView['packages'][number]

function usage(b: Bundle): string {
  return b.data_mb === null
    ? `${b.data_used_mb.toLocaleString('en-US')} MB used of unlimited`
    : `${b.data_used_mb.toLocaleString('en-US')} MB used of ${volume(b.data_mb)}`
}

function packagesTable(packages: readonly Bundle[]): Html {
  return table({
    caption: 'Packages on this eSIM, oldest first',
    rows: packages,
    empty: 'No package.',
    columns: [
      {
        header: 'Package',
        cell: (b: Bundle) => html`${b.name}<br><code>${b.top_up_id ?? b.package_id}</code>`,
      },
      { header: 'Status', cell: (b) => statusBadge(b.status) },
      { header: 'Usage', cell: (b) => usage(b) },
      {
        header: 'Remaining',
        cell: (b) =>
          b.data_remaining_mb === null
            ? 'unlimited'
            : `${b.data_remaining_mb.toLocaleString('en-US')} MB`,
        numeric: true,
      },
      { header: 'Order', cell: (b) => objectLink(b.order_id) },
      {
        header: 'Expires',
        cell: (b) =>
          b.expires_at ? formatTime(new Date(b.expires_at)) : 'at activation + validity',
      },
    ],
  })
}

/** Whole hours until `until`, rounded up (as `esim.validity_expiring` counts them); 0 once it has passed. */
function hoursLeft(until: string, now: Date): number {
  return Math.max(0, Math.ceil((new Date(until).getTime() - now.getTime()) / 3_600_000))
}

/**
 * The eSIM's validity with the hours left, and the alerts that apply to it: its own settings where it has them, else
 * the organization's (docs/esim.md, "Lifecycle and alerts").
 */
async function alertsSection(ctx: PageContext, esim: EsimView): Promise<Html> {
  const org = await getAlertSettings(ctx.deps, apiCtx(ctx))
  const own = esim.alert_settings
  const whose = (mine: unknown) =>
    mine === null || mine === undefined ? "organization's default" : "this eSIM's own"
  const usagePct = own?.usage_thresholds_pct ?? org.usage_thresholds_pct
  const warnHours = own?.validity_warning_hours ?? org.validity_warning_hours
  const until = esim.valid_until
  const left = until === null ? 0 : hoursLeft(until, ctx.deps.clock.now())
  const validity =
    until === null
      ? 'no package yet'
      : left === 0
        ? `ended ${formatTime(new Date(until))}`
        : `until ${formatTime(new Date(until))} (${left.toLocaleString('en-US')} hours left)`
  return html`<section class="card" aria-labelledby="alerts-h"><h2 id="alerts-h">Validity and alerts</h2>
${details([
  ['Validity', html`<span id="esim-validity">${validity}</span>`],
  [
    'Usage alerts',
    html`<span id="esim-usage-alerts">${usagePct.length ? usagePct.map((p) => `${p} %`).join(', ') : 'none'} (${whose(own?.usage_thresholds_pct)})</span>`,
  ],
  [
    'Validity warnings',
    html`<span id="esim-validity-warnings">${warnHours.length ? `${warnHours.map((h) => `${h} h`).join(', ')} before the end` : 'none'} (${whose(own?.validity_warning_hours)})</span>`,
  ],
])}</section>`
}

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const after = queryText(ctx, 'after')
  const page = pageOf(ctx)
  const filters = { cardholder_id: filterValue(ctx, 'cardholder_id', 'id') }
  const esims = await listEsims(ctx.deps, apiCtx(ctx), {
    ...page,
    ...(filters.cardholder_id ? { cardholder_id: filters.cardholder_id } : {}),
  })
  return ctx.render({
    title: 'eSIMs',
    body: html`<p class="muted">eSIMs provisioned for your cardholders, newest first. The activation code is shown only on an eSIM's own page.</p>
${canChange(ctx) ? html`<p><a href="/console/esim/orders/new">Order an eSIM</a></p>` : ''}
${getForm(
  ESIMS,
  html`<div>${field({ name: 'cardholder_id', id: 'filter-cardholder', label: 'Cardholder id', value: filters.cardholder_id })}</div>
<div><button type="submit" class="secondary">Filter</button></div>`,
  'Filter eSIMs',
)}
${table({
  caption: 'eSIMs, newest first',
  rows: esims.data,
  empty: 'No eSIM matches.',
  columns: [
    {
      header: 'eSIM',
      cell: (e: EsimSummaryView) =>
        html`${objectLink(e.id)}<br><span class="muted">ICCID ${e.iccid}</span>`,
    },
    { header: 'Status', cell: (e) => statusBadge(e.status) },
    {
      header: 'Running package',
      cell: (e) => {
        const b = e.packages.find((p) => p.status === 'running') ?? e.packages.at(-1)
        return b ? html`${b.name}: ${statusBadge(b.status)} ${usage(b)}` : 'none'
      },
    },
    { header: 'Cardholder', cell: (e) => objectLink(e.cardholder_id) },
    { header: 'Created', cell: (e) => formatTime(new Date(e.created_at)) },
  ],
})}
${cursorPager(ESIMS, filters, esims.has_more ? esims.next_cursor : null, !after)}`,
  })
}

async function detailPage(
  ctx: PageContext,
  id: string,
  error?: ApiError,
  usageValue = '',
  status = 200,
): Promise<FastifyReply> {
  const esim = await retrieveEsim(ctx.deps, apiCtx(ctx), id)
  const running = esim.packages.find((b) => b.status === 'running')
  // The activation code is the profile itself: owners and developers only, and only here.
  const secretsShown = canChange(ctx)
  const {
    activation_code: _code,
    smdp_address: _smdp,
    matching_id: _matching,
    ios_install_url: _ios,
    android_install_url: _android,
    ...publicView
  } = esim
  return ctx.render(
    {
      title: `eSIM ${esim.id}`,
      body: html`${details([
        ['Status', statusBadge(esim.status)],
        ['ICCID', html`<code>${esim.iccid}</code>`],
        ['Cardholder', objectLink(esim.cardholder_id)],
        ['Order', objectLink(esim.order_id)],
        ['Created', formatTime(new Date(esim.created_at))],
        ['Updated', formatTime(new Date(esim.updated_at))],
      ])}
<h2 id="packages-h">Packages and usage</h2>
${packagesTable(esim.packages)}
${await alertsSection(ctx, esim)}
<section class="card" aria-labelledby="activation-h"><h2 id="activation-h">Activation</h2>
${
  secretsShown
    ? html`<p>The activation code installs the profile: share it only with the cardholder.</p>
${details([
  ['Activation code', html`<code>${esim.activation_code}</code>`],
  ['SM-DP+ address', html`<code>${esim.smdp_address}</code>`],
  ['Install on iOS', html`<a href="${esim.ios_install_url}">One-tap install link (iOS)</a>`],
  [
    'Install on Android',
    html`<a href="${esim.android_install_url}">One-tap install link (Android)</a>`,
  ],
])}`
    : html`<p class="muted">The activation code is shown to owners and developers only.</p>`
}</section>
${sandboxSection(
  ctx,
  'usage-h',
  'Simulate data usage',
  html`${
    running
      ? html`<p>Report the running package's total data used (it only grows; reaching ${volume(running.data_mb)} depletes it).</p>
${error ? errorInWords(ctx, error) : ''}
${postForm(
  `${ESIMS}/${esim.id}/usage`,
  ctx.csrf,
  html`${keyField()}
${field({ name: 'data_used_mb', label: 'Data used in total (MB)', value: usageValue || String(running.data_mb ?? running.data_used_mb + 100), required: true, inputmode: 'numeric', hint: `${running.name}: ${usage(running)}.` })}
<button type="submit" class="primary">Report usage</button>`,
  { label: 'Simulate data usage' },
)}`
      : html`${error ? errorInWords(ctx, error) : ''}<p class="muted">No package is running on this eSIM.</p>`
  }`,
)}
${await eventsSection(ctx, esim.id, esim.created_at)}
<details><summary>As the API shows it${secretsShown ? '' : ' (without the activation fields)'}</summary><pre class="json">${JSON.stringify(secretsShown ? esim : publicView, null, 2)}</pre></details>
<p><a href="${ESIMS}">All eSIMs</a></p>`,
    },
    status,
  )
}

/** eSIMs: the list (no activation codes), one eSIM with its packages and usage (the activation code for owners and developers), and the sandbox's usage report. */
export const esimPages: ConsolePage = {
  name: 'esims',
  register(router) {
    router.get(ESIMS, 'organization', (ctx) => listPage(ctx))
    router.get(`${ESIMS}/:id`, 'organization', (ctx) =>
      detailPage(ctx, (ctx.req.params as { id: string }).id),
    )

    router.post(`${ESIMS}/:id/usage`, 'organization', async (ctx) => {
      refuseOutsideSandbox(ctx)
      const id = (ctx.req.params as { id: string }).id
      const typed = ctx.text('data_used_mb')
      const refuse = (error: ApiError) => detailPage(ctx, id, error, typed, error.status)
      const used = wholeNumber(typed)
      if (used === undefined || Number.isNaN(used) || used > 10_000_000)
        return refuse(
          invalidField(
            'data_used_mb',
            'Give the total data used in MB, a whole number up to 10,000,000.',
          ),
        )
      return consoleAction(
        ctx,
        'esim.usage_simulated',
        async (unit) => {
          const esim = await recordUsage(unit, apiCtx(ctx), id, used)
          const b = esim.packages.find((p) => p.status === 'running') ?? esim.packages.at(-1)
          return {
            to: `${ESIMS}/${esim.id}`,
            text: b ? `Usage recorded: ${b.name} is ${b.status}, ${usage(b)}.` : 'Usage recorded.',
            objectId: esim.id,
          }
        },
        refuse,
      )
    })
  },
}
