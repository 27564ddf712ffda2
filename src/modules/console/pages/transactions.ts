import type { FastifyReply } from 'fastify'
import { listDisputes } from '../../disputes/index.js'
import {
  listTransactions,
  RefundRequest,
  refundTransaction,
  retrieveTransaction,
  settleTransaction,
  TRANSACTION_STATUSES,
  TRANSACTION_TYPES,
  type TransactionView,
} from '../../transactions/index.js'
import { cursorPager, details, field, getForm, selectField, table } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { DISPUTE_REASONS } from './disputes.js'
import { act, actionForm, apiCtx, canChange, doneText } from './changes.js'
import { amountInput, moneyField, optional, pageOf, pathParam, queryText } from './form-input.js'
import {
  amounts,
  conversionInWords,
  eventsSection,
  money,
  objectLink,
  statusBadge,
  when,
} from './object-display.js'
import { orProblem, problemBox, type Problem } from './refusals.js'
import { sandboxOnly, sandboxPanel } from './sandbox.js'

export const TRANSACTIONS = '/console/transactions'

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const filters = { type: queryText(ctx, 'type'), status: queryText(ctx, 'status') }
  const type = (TRANSACTION_TYPES as readonly string[]).includes(filters.type)
    ? filters.type
    : undefined
  const status = (TRANSACTION_STATUSES as readonly string[]).includes(filters.status)
    ? filters.status
    : undefined
  const page = await orProblem(ctx, 'Transactions', () =>
    listTransactions(ctx.deps, apiCtx(ctx), { type, status }, pageOf(ctx)),
  )
  if ('sent' in page) return page.sent
  return ctx.render({
    title: 'Transactions',
    body: html`${getForm(
      TRANSACTIONS,
      html`<div>${selectField('type', 'Type', [['', 'Any'], ...TRANSACTION_TYPES.map((s): [string, string] => [s, s])], filters.type)}</div>
<div>${selectField('status', 'Status', [['', 'Any'], ...TRANSACTION_STATUSES.map((s): [string, string] => [s, s])], filters.status)}</div><div><button type="submit" class="secondary">Filter</button></div>`,
      'Filter transactions',
    )}
${table({
  caption: 'Transactions, newest first',
  rows: page.data,
  empty: 'No transactions match.',
  columns: [
    { header: 'Transaction', cell: (t) => objectLink(t.id) },
    { header: 'Type', cell: (t) => t.type },
    { header: 'Merchant', cell: (t) => t.merchant.name },
    { header: 'Amount', numeric: true, cell: (t) => amounts(t) },
    { header: 'Status', cell: (t) => statusBadge(t.status) },
    { header: 'Card', cell: (t) => objectLink(t.card_id) },
    { header: 'At', cell: (t) => when(t.created_at) },
  ],
})}${cursorPager(TRANSACTIONS, filters, page.next_cursor, !queryText(ctx, 'after'))}`,
  })
}

async function detailPage(
  ctx: PageContext,
  id: string,
  problem?: Problem,
  status = 200,
): Promise<FastifyReply> {
  const api = apiCtx(ctx)
  const read = await orProblem(ctx, 'Transaction', async () => {
    const transaction = await retrieveTransaction(ctx.deps, api, id)
    const disputes = await listDisputes(ctx.deps, api, { transaction_id: id }, { limit: 100 })
    return { transaction, disputes }
  })
  if ('sent' in read) return read.sent
  const { transaction: t, disputes } = read
  const path = `${TRANSACTIONS}/${t.id}`
  // What a dispute may still claim, in the account's currency (refunds of a foreign capture may have given back more).
  const left = Math.max(0, t.amount - t.refunded_amount)
  // Refunds are in the merchant's currency (converted at their own rate when it is not the account's).
  const foreign = t.merchant_currency !== t.currency
  const refundable = t.merchant_amount - t.merchant_refunded_amount
  const open = disputes.data.some((d) => d.status === 'submitted' || d.status === 'under_review')
  const changeable =
    canChange(ctx) && t.type === 'capture' && t.status === 'settled' && refundable > 0
  const refund = changeable
    ? html`<section class="card" aria-labelledby="refund-h"><h2 id="refund-h">Refund</h2>
${actionForm(
  ctx,
  `${path}/refund`,
  'Refund the transaction',
  'Refund',
  html`${moneyField('amount', 'refund-amount', 'Amount', t.merchant_currency, { hint: `Empty: all that is left (${money(refundable, t.merchant_currency)}).${foreign ? " Converted into the account's currency at today's rate." : ''}` })}
${field({ name: 'reason', id: 'refund-reason', label: 'Reason (optional)', maxlength: 500 })}`,
)}</section>`
    : html``
  const dispute =
    changeable && !open
      ? html`<section class="card" aria-labelledby="dispute-h"><h2 id="dispute-h">Dispute</h2>
${actionForm(
  ctx,
  '/console/disputes',
  'Open a dispute',
  'Open dispute',
  html`<input type="hidden" name="transaction_id" value="${t.id}">
${selectField(
  'reason',
  'Reason',
  DISPUTE_REASONS.map((r): [string, string] => [r, r.replace(/_/g, ' ')]),
  'not_received',
  { id: 'dispute-reason' },
)}
${moneyField('amount', 'dispute-amount', 'Amount', t.currency, { hint: `Empty: all that is left (${money(left, t.currency)}).` })}
${field({ name: 'evidence', id: 'dispute-evidence', label: 'Evidence (optional)', maxlength: 2000 })}`,
)}</section>`
      : html``
  const settle =
    t.status === 'pending'
      ? sandboxPanel(
          ctx,
          'Simulate settlement',
          actionForm(
            ctx,
            `${path}/settle`,
            'Settle the transaction now',
            'Settle now',
            html`<p class="muted">The settlement job does it 24 hours after the capture.</p>`,
            'primary',
          ),
        )
      : html``
  return ctx.render(
    {
      title: `${t.type === 'capture' ? 'Capture' : 'Refund'} at ${t.merchant.name}`,
      body: html`${problemBox(problem)}${details([
        ['Transaction', html`<code>${t.id}</code>`],
        ['Type', t.type],
        ['Status', statusBadge(t.status)],
        ['Amount', money(t.amount, t.currency)],
        ['Merchant amount', money(t.merchant_amount, t.merchant_currency)],
        ['Conversion', t.fx ? conversionInWords(t.fx, t.merchant_currency, t.currency) : null],
        [
          'Refunded',
          foreign && t.type === 'capture'
            ? `${money(t.refunded_amount, t.currency)} (${money(t.merchant_refunded_amount, t.merchant_currency)})`
            : money(t.refunded_amount, t.currency),
        ],
        ['Merchant', t.merchant.name],
        ['Authorization', objectLink(t.authorization_id)],
        ['Refund of', objectLink(t.original_transaction_id)],
        ['Card', objectLink(t.card_id)],
        ['Account', objectLink(t.account_id)],
        ['Reason', t.reason],
        ['Settled', when(t.settled_at)],
        ['Created', when(t.created_at)],
      ])}
${settle}${refund}${dispute}
<h2>Disputes</h2>${table({
        caption: 'Disputes of this transaction',
        rows: disputes.data,
        empty: 'Not disputed.',
        columns: [
          { header: 'Dispute', cell: (d) => objectLink(d.id) },
          { header: 'Amount', numeric: true, cell: (d) => money(d.amount, d.currency) },
          { header: 'Status', cell: (d) => statusBadge(d.status) },
        ],
      })}
${await eventsSection(ctx, t.id, t.created_at)}`,
    },
    status,
  )
}

/** Transactions: the list (type, status), one transaction with its disputes; refund, open a dispute; sandbox: settle. */
export const transactionPages: ConsolePage = {
  name: 'transactions',
  register(router) {
    router.get(TRANSACTIONS, 'organization', (ctx) => listPage(ctx))
    router.get(`${TRANSACTIONS}/:id`, 'organization', (ctx) =>
      detailPage(ctx, pathParam(ctx, 'id')),
    )

    router.post(`${TRANSACTIONS}/:id/refund`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const current = await orProblem(ctx, 'Transaction', () =>
        retrieveTransaction(ctx.deps, apiCtx(ctx), id),
      )
      if ('sent' in current) return current.sent
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/transactions/${id}/refund`,
        status: 201,
        schema: RefundRequest,
        action: 'transaction.refunded',
        body: () => {
          const amount = amountInput(ctx.text('amount'), current.merchant_currency)
          return {
            ...(amount === null ? {} : { amount }),
            ...(optional(ctx, 'reason') ? { reason: optional(ctx, 'reason') } : {}),
          }
        },
        run: (body, unit) => refundTransaction(unit, apiCtx(ctx), id, body),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      const r = outcome.object as TransactionView
      return ctx.redirect(`${TRANSACTIONS}/${r.id}`, {
        kind: 'ok',
        text: doneText(outcome, `Refunded ${amounts(r)} to the account.`),
      })
    })

    router.post(`${TRANSACTIONS}/:id/settle`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/simulate/transactions/${id}/settle`,
        body: {},
        action: 'simulate.transaction_settled',
        run: (_body, unit) => settleTransaction(unit, apiCtx(ctx), id),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      return ctx.redirect(`${TRANSACTIONS}/${id}`, {
        kind: 'ok',
        text: doneText(outcome, 'Transaction settled.'),
      })
    })
  },
}
