import type { FastifyReply } from 'fastify'
import {
  inventoryCounts,
  InventoryCsvError,
  listPlatformPackages,
  loadProfiles,
  parseInventoryCsv,
  updatePackage,
  type PackageView,
  type SaleStatus,
} from '../../esim/index.js'
import {
  cursorPager,
  formatMoney,
  postForm,
  selectField,
  table,
  textareaField,
  type Flash,
} from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { audited, ESIM, oneOf, param, query, refusal } from './operator-shared.js'

/** The operator API's bound of one load: 10,000 profiles. */
const MAX_PROFILES = 10_000
/** A pasted stock file: 10,000 lines of `iccid,smdp_address,matching_id` fit with room to spare. */
const UPLOAD_LIMIT = 1024 * 1024
const STATUS_LABEL: Record<SaleStatus, string> = {
  on_sale: 'On sale',
  frozen: 'Frozen',
  withdrawn: 'Withdrawn',
}
const STATUSES = Object.keys(STATUS_LABEL) as SaleStatus[]

function statusForm(ctx: PageContext, p: PackageView) {
  if (p.status === 'withdrawn') return html`<span>Withdrawn (permanent)</span>`
  const options: [string, string][] = STATUSES.map((s) => [
    s,
    s === 'withdrawn' ? 'Withdrawn (permanent)' : STATUS_LABEL[s],
  ])
  return postForm(
    `${ESIM}/packages/${p.id}/status`,
    ctx.csrf,
    html`${selectField('status', `Sale status of ${p.name}`, options, p.status, { id: `status-${p.id}`, hideLabel: true })}
<button type="submit" class="secondary">Set</button>`,
    { class: 'inline status-form' },
  )
}

async function esimPage(
  ctx: PageContext,
  flash?: Flash,
  csv = '',
  status = 200,
): Promise<FastifyReply> {
  const after = query(ctx, 'after')
  const filter = oneOf(query(ctx, 'status'), STATUSES)
  const [counts, packages] = await Promise.all([
    inventoryCounts(ctx.deps),
    listPlatformPackages(
      ctx.deps,
      { status: filter || undefined },
      { limit: 25, ...(after ? { starting_after: after } : {}) },
    ),
  ])
  return ctx.render(
    {
      title: 'eSIM',
      flash,
      body: html`<h2 id="stock-h">Profiles in stock</h2>
${table({
  caption: 'Blank profiles by state',
  rows: [counts],
  empty: '',
  columns: [
    { header: 'Available', cell: (c) => c.available.toLocaleString('en-US'), numeric: true },
    {
      header: 'Reserved by an order',
      cell: (c) => c.allocated.toLocaleString('en-US'),
      numeric: true,
    },
    { header: 'Provisioned', cell: (c) => c.provisioned.toLocaleString('en-US'), numeric: true },
  ],
})}
${counts.available === 0 ? html`<p class="warn">No profile is available: orders fail until stock is loaded.</p>` : ''}
<section class="card" aria-labelledby="upload-h"><h2 id="upload-h">Load profiles</h2>
${postForm(
  `${ESIM}/inventory`,
  ctx.csrf,
  html`${textareaField({
    name: 'csv',
    label: 'Profiles (CSV)',
    value: csv,
    rows: 8,
    mono: true,
    required: true,
    placeholder: 'iccid,smdp_address,matching_id',
    hint: `One profile a line: iccid,smdp_address,matching_id (a header line with those names may come first). At most ${MAX_PROFILES.toLocaleString('en-US')} profiles at a time; ICCIDs already in stock are skipped.`,
  })}
<button type="submit" class="primary">Load profiles</button>`,
  { label: 'Load profiles' },
)}</section>
<h2 id="packages-h">Packages</h2>
<form method="get" action="${ESIM}" class="filters" role="search" aria-label="Filter packages"><div>${selectField('status', 'Sale status', [['', 'Any'], ...STATUSES.map((s): [string, string] => [s, STATUS_LABEL[s]])], filter, { id: 'filter-status' })}</div>
<div><button type="submit" class="secondary">Filter</button></div></form>
${table({
  caption: "The platform's catalogue, oldest first",
  rows: packages.data,
  empty: 'No package matches. Packages are added with POST /operator/v1/esim/packages.',
  columns: [
    { header: 'Package', cell: (p) => html`${p.name}<br><code>${p.id}</code>` },
    {
      header: 'Coverage',
      cell: (p) =>
        `${p.region}: ${p.countries.slice(0, 6).join(', ')}${p.countries.length > 6 ? ` and ${p.countries.length - 6} more` : ''}`,
    },
    {
      header: 'Data',
      cell: (p) =>
        p.data_mb === null
          ? 'Unlimited'
          : p.data_mb >= 1024
            ? `${(p.data_mb / 1024).toLocaleString('en-US')} GB`
            : `${p.data_mb} MB`,
    },
    { header: 'Days', cell: (p) => p.validity_days, numeric: true },
    { header: 'Price', cell: (p) => formatMoney(p.price, p.currency), numeric: true },
    { header: 'Sale status', cell: (p) => statusForm(ctx, p) },
  ],
})}
${cursorPager(ESIM, { status: filter }, packages.has_more ? packages.next_cursor : null, !after)}`,
    },
    status,
  )
}

/** eSIM (operators): stock counts, loading blank profiles from a pasted CSV, and the catalogue's sale statuses. */
export const operatorEsimPages: ConsolePage = {
  name: 'operator-esim',
  register(router) {
    router.get(ESIM, 'operator', (ctx) => esimPage(ctx))

    router.post(
      `${ESIM}/inventory`,
      'operator',
      async (ctx) => {
        const csv = ctx.text('csv')
        const refuse = (text: string) => esimPage(ctx, { kind: 'error', text }, csv, 422)
        let profiles
        try {
          profiles = parseInventoryCsv(csv)
        } catch (err) {
          if (err instanceof InventoryCsvError) return refuse(`Nothing was loaded: ${err.message}.`)
          throw err
        }
        if (profiles.length === 0)
          return refuse(
            'There is no profile in the text: one a line, iccid,smdp_address,matching_id.',
          )
        if (profiles.length > MAX_PROFILES)
          return refuse(
            `Nothing was loaded: ${profiles.length.toLocaleString('en-US')} profiles are more than ${MAX_PROFILES.toLocaleString('en-US')}; split the file.`,
          )
        try {
          const load = await loadProfiles(
            ctx.deps,
            profiles,
            audited(ctx, 'esim_inventory.loaded', () => null),
          )
          const skipped =
            load.skipped > 0
              ? ` ${load.skipped.toLocaleString('en-US')} already in stock ${load.skipped === 1 ? 'was' : 'were'} skipped.`
              : ''
          return ctx.redirect(ESIM, {
            kind: 'ok',
            text: `${load.loaded.toLocaleString('en-US')} profile${load.loaded === 1 ? '' : 's'} loaded.${skipped}`,
          })
        } catch (err) {
          const text = refusal(err)
          if (text === null) throw err
          return refuse(`Nothing was loaded: ${text}`)
        }
      },
      { bodyLimit: UPLOAD_LIMIT },
    )

    router.post(`${ESIM}/packages/:id/status`, 'operator', async (ctx) => {
      const id = param(ctx, 'id')
      const status = ctx.text('status') as SaleStatus
      if (!STATUSES.includes(status))
        return esimPage(
          ctx,
          { kind: 'error', text: 'Choose on sale, frozen or withdrawn.' },
          '',
          422,
        )
      if (status === 'withdrawn' && ctx.text('confirm') !== 'yes') {
        return ctx.render({
          title: 'Withdraw the package?',
          body: html`<div class="card"><p>Withdrawing <code>${id}</code> is permanent: it can never be sold again, and neither can its add-ons. Freeze it instead to stop sales for a while.</p>
${postForm(
  `${ESIM}/packages/${id}/status`,
  ctx.csrf,
  html`<input type="hidden" name="status" value="withdrawn"><input type="hidden" name="confirm" value="yes">
<button type="submit" class="danger">Withdraw for good</button>`,
  { label: 'Confirm the withdrawal' },
)}
<p><a href="${ESIM}">Cancel</a></p></div>`,
        })
      }
      try {
        const before: { status?: string } = {}
        const record = audited(ctx, 'esim_package.status_changed', () => id)
        const pkg = await updatePackage(ctx.deps, id, { status }, async (trx, row) => {
          before.status = row.status
          await record(trx, row)
        })
        return ctx.redirect(
          ESIM,
          before.status === status
            ? {
                kind: 'info',
                text: `${pkg.name} was already ${STATUS_LABEL[status].toLowerCase()}.`,
              }
            : { kind: 'ok', text: `${pkg.name} is ${STATUS_LABEL[pkg.status].toLowerCase()} now.` },
        )
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return esimPage(ctx, { kind: 'error', text }, '', 422)
      }
    })
  },
}
