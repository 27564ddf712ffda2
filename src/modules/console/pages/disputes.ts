import type { FastifyReply } from 'fastify'
import {
  createDispute,
  DisputeCreate,
  DisputeResolve,
  DISPUTE_STATUSES,
  listDisputes,
  resolveDispute,
  retrieveDispute,
  withdrawDispute,
  type DisputeView,
} from '../../disputes/index.js'
import { retrieveTransaction } from '../../transactions/index.js'
import { cursorPager, details, getForm, selectField, table } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { act, actionForm, apiCtx, canChange, doneText } from './changes.js'
import { amountInput, optional, pageOf, pathParam, queryText } from './form-input.js'
import { eventsSection, money, objectLink, statusBadge, when } from './object-display.js'
import { orProblem, problemBox, type Problem } from './refusals.js'
import { sandboxOnly, sandboxPanel } from './sandbox.js'

export const DISPUTES = '/console/disputes'

/** The reasons the console offers (the API takes any text; these are the usual ones). */
export const DISPUTE_REASONS = [
  'not_received',
  'fraudulent',
  'duplicate',
  'not_as_described',
  'canceled',
  'other',
] as const

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const filters = { status: queryText(ctx, 'status') }
  const status = (DISPUTE_STATUSES as readonly string[]).includes(filters.status)
    ? filters.status
    : undefined
  const page = await orProblem(ctx, 'Disputes', () =>
    listDisputes(ctx.deps, apiCtx(ctx), { status }, pageOf(ctx)),
  )
  if ('sent' in page) return page.sent
  return ctx.render({
    title: 'Disputes',
    body: html`${getForm(DISPUTES, html`<div>${selectField('status', 'Status', [['', 'Any'], ...DISPUTE_STATUSES.map((s): [string, string] => [s, s.replace(/_/g, ' ')])], filters.status)}</div><div><button type="submit" class="secondary">Filter</button></div>`, 'Filter disputes')}
<p class="muted">Open a dispute from a settled capture's page.</p>
${table({
  caption: 'Disputes, newest first',
  rows: page.data,
  empty: 'No disputes match.',
  columns: [
    { header: 'Dispute', cell: (d) => objectLink(d.id) },
    { header: 'Reason', cell: (d) => d.reason.replace(/_/g, ' ') },
    { header: 'Amount', numeric: true, cell: (d) => money(d.amount, d.currency) },
    { header: 'Status', cell: (d) => statusBadge(d.status) },
    { header: 'Transaction', cell: (d) => objectLink(d.transaction_id) },
    { header: 'Opened', cell: (d) => when(d.created_at) },
  ],
})}${cursorPager(DISPUTES, filters, page.next_cursor, !queryText(ctx, 'after'))}`,
  })
}

async function detailPage(
  ctx: PageContext,
  id: string,
  problem?: Problem,
  status = 200,
): Promise<FastifyReply> {
  const dispute = await orProblem(ctx, 'Dispute', () => retrieveDispute(ctx.deps, apiCtx(ctx), id))
  if ('sent' in dispute) return dispute.sent
  const path = `${DISPUTES}/${dispute.id}`
  const open = dispute.status === 'submitted' || dispute.status === 'under_review'
  const withdraw =
    open && canChange(ctx)
      ? html`<div class="actions">${actionForm(ctx, `${path}/withdraw`, 'Withdraw the dispute', 'Withdraw dispute', html``, 'danger')}</div>`
      : html``
  const resolve = open
    ? sandboxPanel(
        ctx,
        'Simulate the network decision',
        html`<div class="actions">
${actionForm(ctx, `${path}/resolve`, 'Resolve as won', 'Resolve: won', html`<input type="hidden" name="outcome" value="won">`, 'primary')}
${actionForm(ctx, `${path}/resolve`, 'Resolve as lost', 'Resolve: lost', html`<input type="hidden" name="outcome" value="lost">`)}</div>
<p class="muted">Won credits the disputed amount to the account.</p>`,
      )
    : html``
  const evidence =
    dispute.evidence === null
      ? null
      : typeof dispute.evidence === 'string'
        ? dispute.evidence
        : JSON.stringify(dispute.evidence)
  return ctx.render(
    {
      title: `Dispute: ${dispute.reason.replace(/_/g, ' ')}`,
      body: html`${problemBox(problem)}${details([
        ['Dispute', html`<code>${dispute.id}</code>`],
        ['Status', statusBadge(dispute.status)],
        ['Amount', money(dispute.amount, dispute.currency)],
        ['Reason', dispute.reason],
        ['Evidence', evidence],
        ['Transaction', objectLink(dispute.transaction_id)],
        ['Card', objectLink(dispute.card_id)],
        ['Account', objectLink(dispute.account_id)],
        ['Resolved', when(dispute.resolved_at)],
        ['Opened', when(dispute.created_at)],
      ])}
${withdraw}${resolve}
${await eventsSection(ctx, dispute.id, dispute.created_at)}`,
    },
    status,
  )
}

/** Disputes: the list (status), one dispute; open (from a transaction), withdraw; sandbox: resolve won or lost. */
export const disputePages: ConsolePage = {
  name: 'disputes',
  register(router) {
    router.get(DISPUTES, 'organization', (ctx) => listPage(ctx))
    router.get(`${DISPUTES}/:id`, 'organization', (ctx) => detailPage(ctx, pathParam(ctx, 'id')))

    router.post(DISPUTES, 'organization', async (ctx) => {
      const transactionId = ctx.text('transaction_id')
      const transaction = await orProblem(ctx, 'Transaction', () =>
        retrieveTransaction(ctx.deps, apiCtx(ctx), transactionId),
      )
      if ('sent' in transaction) return transaction.sent
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/disputes',
        status: 201,
        schema: DisputeCreate,
        action: 'dispute.created',
        body: () => {
          const amount = amountInput(ctx.text('amount'), transaction.currency)
          return {
            transaction_id: transactionId,
            reason: ctx.text('reason'),
            ...(amount === null ? {} : { amount }),
            ...(optional(ctx, 'evidence') ? { evidence: optional(ctx, 'evidence') } : {}),
          }
        },
        run: (body, unit) => createDispute(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) {
        return ctx.render(
          {
            title: 'The dispute was not opened',
            body: html`${problemBox(outcome.problem)}<p>${objectLink(transactionId, 'Back to the transaction')}</p>`,
            flash: null,
          },
          outcome.status,
        )
      }
      const dispute = outcome.object as DisputeView
      return ctx.redirect(`${DISPUTES}/${dispute.id}`, {
        kind: 'ok',
        text: doneText(outcome, `Dispute opened for ${money(dispute.amount, dispute.currency)}.`),
      })
    })

    router.post(`${DISPUTES}/:id/withdraw`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/disputes/${id}/withdraw`,
        body: {},
        action: 'dispute.withdrawn',
        run: (_body, unit) => withdrawDispute(unit, apiCtx(ctx), id),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      return ctx.redirect(`${DISPUTES}/${id}`, {
        kind: 'ok',
        text: doneText(outcome, 'Dispute withdrawn.'),
      })
    })

    router.post(`${DISPUTES}/:id/resolve`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/simulate/disputes/${id}/resolve`,
        body: { outcome: ctx.text('outcome') },
        schema: DisputeResolve,
        action: 'simulate.dispute_resolved',
        run: (body, unit) => resolveDispute(unit, apiCtx(ctx), id, body.outcome),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      const dispute = outcome.object as DisputeView
      return ctx.redirect(`${DISPUTES}/${id}`, {
        kind: 'ok',
        text: doneText(outcome, `Dispute ${dispute.status}.`),
      })
    })
  },
}
