import { randomBytes } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import { withTx } from '../../../db/tx.js'
import { setSimDirective } from '../../../esim-network/simulator.js'
import type { ApiError } from '../../../http/errors.js'
import {
  createOrder,
  listOrders,
  listPackages,
  requireOrder,
  retrieveOrder,
  retrievePackage,
  settleOrder,
  simulateSaleStatus,
  viewOf,
  type OrderView,
  type PackageView,
  type SaleStatus,
} from '../../esim/index.js'
import {
  cursorPager,
  details,
  field,
  formatMoney,
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
import { refuseOutsideSandbox, sandboxSection, sandboxTools } from './sandbox.js'

export const ESIM_ORDERS = '/console/esim/orders'
const STATUSES = ['completed', 'unsettled', 'failed'] as const
const SALE_STATUSES: SaleStatus[] = ['on_sale', 'frozen', 'withdrawn']
const OUTCOMES = ['success', 'timeout', 'failure'] as const

/** A package's volume in words. */
export function volume(mb: number | null): string {
  return mb === null
    ? 'unlimited'
    : mb >= 1024
      ? `${(mb / 1024).toLocaleString('en-US')} GB`
      : `${mb} MB`
}

function packageLabel(p: PackageView): string {
  return `${p.name} — ${volume(p.data_mb)}, ${p.validity_days} days, ${formatMoney(p.price, p.currency)}`
}

const REGIONS = ['local', 'regional', 'global'] as const

/** The catalogue as this organization's environment sees it (its sandbox overrides included), up to 100 packages. */
async function catalogue(
  ctx: PageContext,
  status?: SaleStatus,
  where: { country?: string; region?: string } = {},
): Promise<PackageView[]> {
  return (
    await listPackages(ctx.deps, apiCtx(ctx), {
      limit: 100,
      ...(status ? { status } : {}),
      ...(where.country ? { country: where.country } : {}),
      ...(where.region ? { region: where.region as (typeof REGIONS)[number] } : {}),
    } as Parameters<typeof listPackages>[2])
  ).data
}

async function listPage(
  ctx: PageContext,
  sale?: { error: ApiError },
  status = 200,
): Promise<FastifyReply> {
  const after = queryText(ctx, 'after')
  const page = pageOf(ctx)
  const reference = String((ctx.req.query as Record<string, unknown>).reference ?? '').slice(0, 128)
  const filters = {
    status: filterValue(ctx, 'status', STATUSES),
    cardholder_id: filterValue(ctx, 'cardholder_id', 'id'),
    reference,
  }
  const orders = await listOrders(ctx.deps, apiCtx(ctx), {
    ...page,
    ...(filters.status ? { status: filters.status as OrderView['status'] } : {}),
    ...(filters.cardholder_id ? { cardholder_id: filters.cardholder_id } : {}),
    ...(reference ? { reference } : {}),
  })
  const packages = sandboxTools(ctx) ? await catalogue(ctx) : []
  return ctx.render(
    {
      title: 'eSIM orders',
      body: html`${canChange(ctx) ? html`<p><a href="${ESIM_ORDERS}/new">Order an eSIM</a></p>` : ''}
${getForm(
  ESIM_ORDERS,
  html`<div>${selectField('status', 'Status', [['', 'Any'], ...STATUSES.map((s): [string, string] => [s, s])], filters.status, { id: 'filter-status' })}</div>
<div>${field({ name: 'cardholder_id', id: 'filter-cardholder', label: 'Cardholder id', value: filters.cardholder_id })}</div>
<div>${field({ name: 'reference', id: 'filter-reference', label: 'Reference', value: reference })}</div>
<div><button type="submit" class="secondary">Filter</button></div>`,
  'Filter eSIM orders',
)}
${table({
  caption: 'eSIM orders and top-ups, newest first',
  rows: orders.data,
  empty: 'No order matches.',
  columns: [
    {
      header: 'Order',
      cell: (o: OrderView) =>
        html`${objectLink(o.id)}<br><span class="muted">${o.reference}</span>`,
    },
    { header: 'Type', cell: (o) => (o.type === 'top_up' ? 'top-up' : 'package') },
    { header: 'Status', cell: (o) => statusBadge(o.status) },
    { header: 'Price', cell: (o) => formatMoney(o.price, o.currency), numeric: true },
    { header: 'eSIM', cell: (o) => objectLink(o.esim_id) },
    { header: 'Cardholder', cell: (o) => objectLink(o.cardholder_id) },
    { header: 'Created', cell: (o) => formatTime(new Date(o.created_at)) },
  ],
})}
${cursorPager(ESIM_ORDERS, filters, orders.has_more ? orders.next_cursor : null, !after)}
${sandboxSection(
  ctx,
  'sale-h',
  'Package sale status',
  html`<p>Freeze or withdraw a package for this organization's sandbox only, to see how orders are refused.</p>
${sale ? errorInWords(ctx, sale.error) : ''}
${postForm(
  `${ESIM_ORDERS}/package-status`,
  ctx.csrf,
  html`${keyField()}
${selectField(
  'package_id',
  'Package',
  packages.map((p): [string, string] => [p.id, `${p.name} (${p.status.replace('_', ' ')})`]),
  undefined,
  { id: 'sale-package' },
)}
${selectField(
  'status',
  'Sale status',
  SALE_STATUSES.map((s): [string, string] => [
    s,
    s === 'withdrawn' ? 'withdrawn (permanent)' : s.replace('_', ' '),
  ]),
  'frozen',
  { id: 'sale-status' },
)}
<button type="submit" class="secondary">Set</button>`,
  { label: "Set a package's sale status" },
)}`,
)}`,
    },
    status,
  )
}

interface OrderValues {
  package_id?: string
  cardholder_id?: string
  account_id?: string
  reference?: string
}

async function newOrderPage(
  ctx: PageContext,
  values: OrderValues = {},
  error?: ApiError,
  outcome?: { error: ApiError },
  status = 200,
): Promise<FastifyReply> {
  if (!canChange(ctx)) {
    return ctx.render({
      title: 'Order an eSIM',
      body: html`<p>Your role reads eSIM orders only: ordering one needs an owner or a developer.</p><p><a href="${ESIM_ORDERS}">All eSIM orders</a></p>`,
    })
  }
  const q = ctx.req.query as Record<string, unknown>
  const country = /^[A-Za-z]{3}$/.test(String(q.country ?? ''))
    ? String(q.country).toUpperCase()
    : ''
  const region = filterValue(ctx, 'region', REGIONS)
  const packages = await catalogue(ctx, 'on_sale', { country, region })
  const v: OrderValues = {
    package_id: values.package_id,
    cardholder_id: values.cardholder_id ?? String(q.cardholder_id ?? '').slice(0, 64),
    account_id: values.account_id ?? String(q.account_id ?? '').slice(0, 64),
    reference: values.reference ?? `console-${randomBytes(6).toString('hex')}`,
  }
  return ctx.render(
    {
      title: 'Order an eSIM',
      body: html`${getForm(
        `${ESIM_ORDERS}/new`,
        html`<input type="hidden" name="cardholder_id" value="${v.cardholder_id ?? ''}"><input type="hidden" name="account_id" value="${v.account_id ?? ''}">
<div>${field({ name: 'country', id: 'find-country', label: 'Country covered', value: country, maxlength: 3, hint: 'Three letters, e.g. FRA.' })}</div>
<div>${selectField('region', 'Coverage', [['', 'Any'], ...REGIONS.map((r): [string, string] => [r, r])], region, { id: 'find-region' })}</div>
<div><button type="submit" class="secondary">Find packages</button></div>`,
        'Find packages',
      )}
<section class="card" aria-labelledby="order-h"><h2 id="order-h">Order</h2>
<p>An eSIM with a package of the catalogue, for a cardholder. With an account, the price is debited from it when the order completes; without one, the organization is billed.</p>
${error ? errorInWords(ctx, error) : ''}
${
  packages.length === 0
    ? html`<p class="warn">No package on sale matches.</p>`
    : postForm(
        ESIM_ORDERS,
        ctx.csrf,
        html`${keyField()}
${selectField(
  'package_id',
  'Package',
  packages.map((p): [string, string] => [p.id, packageLabel(p)]),
  v.package_id,
  {
    id: 'order-package',
    hint:
      packages.length === 100
        ? 'The first 100 packages on sale: narrow them by country or coverage above.'
        : `${packages.length} package${packages.length === 1 ? '' : 's'} on sale.`,
  },
)}
${field({ name: 'cardholder_id', id: 'order-cardholder', label: 'Cardholder id', value: v.cardholder_id, required: true, hint: 'chd_…: who the eSIM is for.' })}
${field({ name: 'account_id', id: 'order-account', label: 'Pay from account (optional)', value: v.account_id, hint: "acct_… of that cardholder, in the package's currency." })}
${field({ name: 'reference', id: 'order-reference', label: 'Reference', value: v.reference, required: true, maxlength: 128, hint: 'Unique in your organization: your own id of this sale.' })}
<button type="submit" class="primary">Order the eSIM</button>`,
        { label: 'Order an eSIM' },
      )
}</section>
${sandboxSection(
  ctx,
  'outcome-h',
  'Next provisioning outcome',
  html`<p>What the simulated eSIM network does with this organization's next order: succeed, time out (the order stays unsettled until settled), or fail.</p>
${outcome ? errorInWords(ctx, outcome.error) : ''}
${postForm(
  `${ESIM_ORDERS}/provisioning`,
  ctx.csrf,
  html`${keyField()}
${selectField(
  'next_outcome',
  'Next outcome',
  OUTCOMES.map((o): [string, string] => [o, o]),
  'success',
  { id: 'outcome-next' },
)}
<button type="submit" class="secondary">Set</button>`,
  { label: 'Set the next provisioning outcome' },
)}`,
)}
<p><a href="${ESIM_ORDERS}">All eSIM orders</a></p>`,
    },
    status,
  )
}

async function detailPage(
  ctx: PageContext,
  id: string,
  error?: ApiError,
  status = 200,
): Promise<FastifyReply> {
  const rctx = apiCtx(ctx)
  const order = await retrieveOrder(ctx.deps, rctx, id)
  const pkg = await retrievePackage(ctx.deps, viewOf(rctx), order.package_id).catch(() => null)
  return ctx.render(
    {
      title: `eSIM order ${order.id}`,
      body: html`${error ? errorInWords(ctx, error) : ''}
${details([
  ['Status', statusBadge(order.status)],
  ['Type', order.type === 'top_up' ? 'top-up' : 'package'],
  ['Package', html`${pkg ? packageLabel(pkg) : ''} <code>${order.package_id}</code>`],
  ['Top-up', order.top_up_id ? html`<code>${order.top_up_id}</code>` : 'none'],
  ['eSIM', objectLink(order.esim_id)],
  ['Cardholder', objectLink(order.cardholder_id)],
  ['Paid from', order.account_id ? objectLink(order.account_id) : 'billed to the organization'],
  ['Price', formatMoney(order.price, order.currency)],
  [
    'Charged',
    order.charged_amount === null || order.charged_currency === null
      ? 'nothing (billed to the organization)'
      : `${formatMoney(order.charged_amount, order.charged_currency)}${
          order.fx
            ? ` (at ${order.fx.rate} ${order.charged_currency} per ${order.currency}, markup ${order.fx.markup_bps / 100} %, ` +
              `${formatMoney(order.fx.fee_amount, order.charged_currency)} of it)`
            : ''
        }`,
  ],
  ['Reference', order.reference],
  ['Failure', order.failure_reason ?? 'none'],
  ['Created', formatTime(new Date(order.created_at))],
  ['Settled', order.settled_at ? formatTime(new Date(order.settled_at)) : 'not yet'],
])}
${
  order.status === 'unsettled'
    ? sandboxSection(
        ctx,
        'settle-h',
        'Settle now',
        html`<p>Runs the settlement the background job would run, as the network recorded the order.</p>
${postForm(`${ESIM_ORDERS}/${order.id}/settle`, ctx.csrf, html`${keyField()}<button type="submit" class="secondary">Settle the order</button>`, { label: 'Settle the order' })}`,
      )
    : ''
}
${await eventsSection(ctx, order.id, order.created_at)}
${apiView(order)}
<p><a href="${ESIM_ORDERS}">All eSIM orders</a></p>`,
    },
    status,
  )
}

/** eSIM orders: the list (status, cardholder, reference), one order, the order form (paid from an account), and the sandbox's network and catalogue controls. */
export const esimOrderPages: ConsolePage = {
  name: 'esim-orders',
  register(router) {
    router.get(ESIM_ORDERS, 'organization', (ctx) => listPage(ctx))
    router.get(`${ESIM_ORDERS}/new`, 'organization', (ctx) => newOrderPage(ctx))
    router.get(`${ESIM_ORDERS}/:id`, 'organization', (ctx) =>
      detailPage(ctx, (ctx.req.params as { id: string }).id),
    )

    router.post(ESIM_ORDERS, 'organization', async (ctx) => {
      const values: OrderValues = {
        package_id: ctx.text('package_id').trim(),
        cardholder_id: ctx.text('cardholder_id').trim(),
        account_id: ctx.text('account_id').trim(),
        reference: ctx.text('reference').trim(),
      }
      const refuse = (error: ApiError) => newOrderPage(ctx, values, error, undefined, error.status)
      if (!values.cardholder_id)
        return refuse(
          invalidField('cardholder_id', 'Give the id of the cardholder the eSIM is for.'),
        )
      if (!values.reference || values.reference.length > 128)
        return refuse(invalidField('reference', 'Give a reference of 1 to 128 characters.'))
      return consoleAction(
        ctx,
        'esim_order.created',
        async (unit) => {
          const order = await createOrder(unit, apiCtx(ctx), {
            package_id: values.package_id ?? '',
            reference: values.reference ?? '',
            cardholder_id: values.cardholder_id,
            ...(values.account_id ? { account_id: values.account_id } : {}),
          })
          const to = order.esim_id
            ? `/console/esims/${order.esim_id}`
            : `${ESIM_ORDERS}/${order.id}`
          return {
            to,
            text: `Order ${order.id} ${order.status}${order.esim_id ? `: eSIM ${order.esim_id} is ready` : ''}.`,
            objectId: order.id,
          }
        },
        refuse,
      )
    })

    router.post(`${ESIM_ORDERS}/:id/settle`, 'organization', async (ctx) => {
      refuseOutsideSandbox(ctx)
      const id = (ctx.req.params as { id: string }).id
      return consoleAction(
        ctx,
        'esim_order.settled',
        async (unit) => {
          const order = await requireOrder(unit, apiCtx(ctx), id)
          await settleOrder(unit, order.id, { force: true })
          const settled = await retrieveOrder(unit, apiCtx(ctx), order.id)
          return {
            to: `${ESIM_ORDERS}/${settled.id}`,
            text: `The order is ${settled.status}.`,
            objectId: settled.id,
          }
        },
        (error) => detailPage(ctx, id, error, error.status),
      )
    })

    router.post(`${ESIM_ORDERS}/package-status`, 'organization', async (ctx) => {
      refuseOutsideSandbox(ctx)
      const status = ctx.text('status') as SaleStatus
      const refuse = (error: ApiError) => listPage(ctx, { error }, error.status)
      if (!SALE_STATUSES.includes(status))
        return refuse(invalidField('status', 'Choose on sale, frozen or withdrawn.'))
      return consoleAction(
        ctx,
        'esim_package.sandbox_status_changed',
        async (unit) => {
          const pkg = await simulateSaleStatus(unit, apiCtx(ctx), ctx.text('package_id'), status)
          return {
            to: ESIM_ORDERS,
            text: `${pkg.name} is ${pkg.status.replace('_', ' ')} in this sandbox now.`,
            objectId: pkg.id,
          }
        },
        refuse,
      )
    })

    router.post(`${ESIM_ORDERS}/provisioning`, 'organization', async (ctx) => {
      refuseOutsideSandbox(ctx)
      const next = ctx.text('next_outcome') as (typeof OUTCOMES)[number]
      if (!OUTCOMES.includes(next))
        return newOrderPage(
          ctx,
          {},
          undefined,
          { error: invalidField('next_outcome', 'Choose success, timeout or failure.') },
          422,
        )
      return consoleAction(
        ctx,
        'esim_provisioning.simulated',
        async (unit) => {
          await withTx(unit.db, (trx) =>
            setSimDirective(trx, apiCtx(ctx), { next_outcome: next }, unit.clock.now()),
          )
          return {
            to: `${ESIM_ORDERS}/new`,
            text: `The next order will ${next === 'success' ? 'succeed' : next === 'timeout' ? 'time out' : 'fail'}.`,
            objectId: null,
          }
        },
        (error) => newOrderPage(ctx, {}, undefined, { error }, error.status),
      )
    })
  },
}
