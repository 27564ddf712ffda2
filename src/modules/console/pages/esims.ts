import type { FastifyReply } from 'fastify'
import type { ApiError } from '../../../http/errors.js'
import {
  getAlertSettings,
  listEsims,
  offersForEsim,
  recordUsage,
  retrieveEsim,
  updateEsim,
  type EsimSummaryView,
  type EsimView,
  type TopUpView,
} from '../../esim/index.js'
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

/** What a person typed in the auto top-up form, shown again with a refusal. */
type AutoTopUpTyped = Record<
  'top_up_id' | 'account_id' | 'trigger' | 'threshold_pct' | 'max_per_month',
  string
>

function triggerInWords(auto: NonNullable<EsimView['auto_top_up']>): string {
  return auto.trigger === 'depleted'
    ? 'when the running package has no data left'
    : `when usage crosses ${auto.threshold_pct} % of the running package`
}

/** The eSIM's auto top-up: its settings, and (owners and developers) the form that sets them or turns them off. */
function autoTopUpSection(
  ctx: PageContext,
  esim: EsimView,
  offers: readonly TopUpView[],
  error?: ApiError,
  typed?: AutoTopUpTyped,
): Html {
  const auto = esim.auto_top_up
  const state = auto
    ? details([
        ['Add-on', html`<code>${auto.top_up_id}</code>`],
        ['Paid from', objectLink(auto.account_id)],
        ['When', triggerInWords(auto)],
        ['This month', `${auto.runs_this_month} of at most ${auto.max_per_month}`],
      ])
    : html`<p>Off: no data is added on its own.</p>`
  const choices: [string, string][] = offers.map((o) => [
    o.id,
    `${o.name} (${o.data_mb === null ? 'unlimited' : volume(o.data_mb)})`,
  ])
  if (auto && !offers.some((o) => o.id === auto.top_up_id))
    choices.unshift([auto.top_up_id, auto.top_up_id])
  const value = (name: keyof AutoTopUpTyped, current: string) => typed?.[name] ?? current
  const form =
    canChange(ctx) && choices.length > 0
      ? html`${error ? errorInWords(ctx, error) : ''}
${postForm(
  `${ESIMS}/${esim.id}/auto_top_up`,
  ctx.csrf,
  html`${keyField()}
<div>${selectField('top_up_id', 'Add-on', choices, value('top_up_id', auto?.top_up_id ?? ''))}</div>
<div>${field({ name: 'account_id', id: 'f-auto-account', label: 'Pay from account', value: value('account_id', auto?.account_id ?? ''), required: true, hint: "An account of the eSIM's cardholder (acct_…)." })}</div>
<div>${selectField(
    'trigger',
    'When',
    [
      ['depleted', 'When the data runs out'],
      ['threshold', 'When usage crosses a percentage'],
    ],
    value('trigger', auto?.trigger ?? 'depleted'),
  )}</div>
<div>${field({ name: 'threshold_pct', label: 'Percentage of the package', value: value('threshold_pct', auto?.threshold_pct ? String(auto.threshold_pct) : ''), inputmode: 'numeric', hint: 'With "When usage crosses a percentage": 1 to 100.' })}</div>
<div>${field({ name: 'max_per_month', label: 'At most per month', value: value('max_per_month', String(auto?.max_per_month ?? 3)), required: true, inputmode: 'numeric', hint: 'Top-ups per calendar month (UTC), 1 to 100.' })}</div>
<button type="submit" class="primary">Save auto top-up</button>`,
  { label: 'Set auto top-up' },
)}
${
  auto
    ? postForm(
        `${ESIMS}/${esim.id}/auto_top_up/off`,
        ctx.csrf,
        html`${keyField()}<button type="submit" class="secondary">Turn auto top-up off</button>`,
        { label: 'Turn auto top-up off' },
      )
    : ''
}`
      : canChange(ctx)
        ? html`<p class="muted">No add-on is sold for the packages on this eSIM.</p>`
        : ''
  return html`<section class="card" aria-labelledby="auto-top-up-h"><h2 id="auto-top-up-h">Auto top-up</h2>
<p class="muted">Buys the add-on from the account once each time usage crosses the trigger, at most the monthly number of times.</p>
${state}
${form}</section>`
}

/** The form's fields as the API's `auto_top_up`, or the refusal of a field the form can judge itself. */
function autoTopUpBody(typed: AutoTopUpTyped): Record<string, unknown> | ApiError {
  const max = wholeNumber(typed.max_per_month)
  if (max === undefined || Number.isNaN(max) || max < 1 || max > 100)
    return invalidField(
      'auto_top_up.max_per_month',
      'Give at most how many top-ups a month, a whole number from 1 to 100.',
    )
  if (typed.trigger !== 'depleted' && typed.trigger !== 'threshold')
    return invalidField('auto_top_up.trigger', 'Choose when the top-up runs.')
  const body: Record<string, unknown> = {
    top_up_id: typed.top_up_id,
    account_id: typed.account_id,
    trigger: typed.trigger,
    max_per_month: max,
  }
  if (typed.trigger === 'depleted') return body
  const pct = wholeNumber(typed.threshold_pct)
  if (pct === undefined || Number.isNaN(pct) || pct < 1 || pct > 100)
    return invalidField(
      'auto_top_up.threshold_pct',
      'Give the percentage of the package, a whole number from 1 to 100.',
    )
  return { ...body, threshold_pct: pct }
}

/** Whole hours until `until`, rounded up (as `esim.validity_expiring` counts them); 0 once it has passed. */
function hoursLeft(until: string, now: Date): number {
  return Math.max(0, Math.ceil((new Date(until).getTime() - now.getTime()) / 3_600_000))
}

/**
 * The eSIM's validity with the hours left, and the alerts that apply to it: its own settings where it has them, else
 * the organization's (docs/esim.md, "Lifecycle and alerts").
 */
/** What a person typed in the alerts form, shown again with a refusal. */
type AlertsTyped = { usage: string; warnings: string }

/** A list typed as `50, 80, 90` (commas or spaces): whole numbers, or null when empty (the organization's). */
function typedList(text: string, param: string, what: string): number[] | null | ApiError {
  const parts = text.split(/[\s,]+/).filter(Boolean)
  if (parts.length === 0) return null
  const numbers = parts.map((p) => (/^\d{1,4}$/.test(p) ? Number(p) : Number.NaN))
  if (numbers.some(Number.isNaN))
    return invalidField(
      param,
      `Give ${what} as whole numbers separated by commas, or leave it empty.`,
    )
  return numbers
}

/** The alerts form's fields as the API's `alert_settings`, or the refusal of a field the form can judge. */
function alertsBody(typed: AlertsTyped): Record<string, number[] | null> | ApiError {
  const usage = typedList(typed.usage, 'alert_settings.usage_thresholds_pct', 'the percentages')
  if (usage instanceof Error) return usage
  const warnings = typedList(typed.warnings, 'alert_settings.validity_warning_hours', 'the hours')
  if (warnings instanceof Error) return warnings
  return { usage_thresholds_pct: usage, validity_warning_hours: warnings }
}

async function alertsSection(
  ctx: PageContext,
  esim: EsimView,
  error?: ApiError,
  typed?: AlertsTyped,
): Promise<Html> {
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
])}
${
  canChange(ctx) && esim.status !== 'canceled'
    ? html`${error ? errorInWords(ctx, error) : ''}${postForm(
        `${ESIMS}/${esim.id}/alerts`,
        ctx.csrf,
        html`${keyField()}
<div>${field({ name: 'usage_thresholds_pct', id: 'f-alert-usage', label: "This eSIM's usage alerts (%)", value: typed?.usage ?? own?.usage_thresholds_pct?.join(', ') ?? '', hint: `Ascending, 1 to 100, like 50, 80, 100. Empty: the organization's (${org.usage_thresholds_pct.join(', ') || 'none'}).` })}</div>
<div>${field({ name: 'validity_warning_hours', id: 'f-alert-hours', label: "This eSIM's validity warnings (hours before the end)", value: typed?.warnings ?? own?.validity_warning_hours?.join(', ') ?? '', hint: `Like 72, 24. Empty: the organization's (${org.validity_warning_hours.join(', ') || 'none'}).` })}</div>
<button type="submit" class="secondary">Save alerts</button>`,
        { label: "Set this eSIM's alerts" },
      )}`
    : ''
}</section>`
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
  autoTyped?: AutoTopUpTyped,
  alertsTyped?: AlertsTyped,
): Promise<FastifyReply> {
  const esim = await retrieveEsim(ctx.deps, apiCtx(ctx), id)
  const offers = canChange(ctx) ? await offersForEsim(ctx.deps, apiCtx(ctx), id) : []
  // A refusal of the auto top-up form is shown beside that form, not the usage one.
  const usageError = autoTyped || alertsTyped ? undefined : error
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
${autoTopUpSection(ctx, esim, offers, autoTyped ? error : undefined, autoTyped)}
${await alertsSection(ctx, esim, alertsTyped ? error : undefined, alertsTyped)}
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
${usageError ? errorInWords(ctx, usageError) : ''}
${postForm(
  `${ESIMS}/${esim.id}/usage`,
  ctx.csrf,
  html`${keyField()}
${field({ name: 'data_used_mb', label: 'Data used in total (MB)', value: usageValue || String(running.data_mb ?? running.data_used_mb + 100), required: true, inputmode: 'numeric', hint: `${running.name}: ${usage(running)}.` })}
<button type="submit" class="primary">Report usage</button>`,
  { label: 'Simulate data usage' },
)}`
      : html`${usageError ? errorInWords(ctx, usageError) : ''}<p class="muted">No package is running on this eSIM.</p>`
  }`,
)}
${await eventsSection(ctx, esim.id, esim.created_at)}
<details><summary>As the API shows it${secretsShown ? '' : ' (without the activation fields)'}</summary><pre class="json">${JSON.stringify(secretsShown ? esim : publicView, null, 2)}</pre></details>
<p><a href="${ESIMS}">All eSIMs</a></p>`,
    },
    status,
  )
}

/**
 * eSIMs: the list (no activation codes), one eSIM with its packages and usage (the activation code for owners and
 * developers), its auto top-up (set or turned off by owners and developers), and the sandbox's usage report.
 */
export const esimPages: ConsolePage = {
  name: 'esims',
  register(router) {
    router.get(ESIMS, 'organization', (ctx) => listPage(ctx))
    router.get(`${ESIMS}/:id`, 'organization', (ctx) =>
      detailPage(ctx, (ctx.req.params as { id: string }).id),
    )

    router.post(`${ESIMS}/:id/auto_top_up`, 'organization', async (ctx) => {
      const id = (ctx.req.params as { id: string }).id
      const typed: AutoTopUpTyped = {
        top_up_id: ctx.text('top_up_id').trim(),
        account_id: ctx.text('account_id').trim(),
        trigger: ctx.text('trigger'),
        threshold_pct: ctx.text('threshold_pct'),
        max_per_month: ctx.text('max_per_month'),
      }
      const refuse = (error: ApiError) => detailPage(ctx, id, error, '', error.status, typed)
      const body = autoTopUpBody(typed)
      if (body instanceof Error) return refuse(body)
      return consoleAction(
        ctx,
        'esim.auto_top_up_set',
        async (unit) => {
          const esim = await updateEsim(unit, apiCtx(ctx), id, { auto_top_up: body as never })
          return {
            to: `${ESIMS}/${esim.id}`,
            text: `Auto top-up is on: ${triggerInWords(esim.auto_top_up!)}.`,
            objectId: esim.id,
          }
        },
        refuse,
      )
    })

    router.post(`${ESIMS}/:id/alerts`, 'organization', async (ctx) => {
      const id = (ctx.req.params as { id: string }).id
      const typed: AlertsTyped = {
        usage: ctx.text('usage_thresholds_pct'),
        warnings: ctx.text('validity_warning_hours'),
      }
      const refuse = (error: ApiError) =>
        detailPage(ctx, id, error, '', error.status, undefined, typed)
      const body = alertsBody(typed)
      if (body instanceof Error) return refuse(body)
      return consoleAction(
        ctx,
        'esim.alert_settings_set',
        async (unit) => {
          const esim = await updateEsim(unit, apiCtx(ctx), id, { alert_settings: body as never })
          return {
            to: `${ESIMS}/${esim.id}`,
            text: "The eSIM's alerts are saved.",
            objectId: esim.id,
          }
        },
        refuse,
      )
    })

    router.post(`${ESIMS}/:id/auto_top_up/off`, 'organization', async (ctx) => {
      const id = (ctx.req.params as { id: string }).id
      return consoleAction(
        ctx,
        'esim.auto_top_up_off',
        async (unit) => {
          const esim = await updateEsim(unit, apiCtx(ctx), id, { auto_top_up: null })
          return { to: `${ESIMS}/${esim.id}`, text: 'Auto top-up is off.', objectId: esim.id }
        },
        (error) => detailPage(ctx, id, error, '', error.status),
      )
    })

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
