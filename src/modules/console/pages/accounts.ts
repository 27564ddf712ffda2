import type { FastifyReply } from 'fastify'
import { cardholderNames } from '../../cardholders/index.js'
import {
  AccountBlockRequest,
  AccountCreateRequest,
  accountProgramOf,
  BLOCK_REASONS,
  createAccount,
  listAccounts,
  retrieveAccount,
  setAccountStatus,
  type AccountView,
} from '../../accounts/index.js'
import { listAuthorizations } from '../../authorizations/index.js'
import { listCards } from '../../cards/index.js'
import { retrieveCardholder } from '../../cardholders/index.js'
import { listPrograms } from '../../programs/index.js'
import { AccountAdjustmentRequest, adjustBalance, listEntries } from '../../ledger/index.js'
import { cursorPager, details, field, getForm, selectField, table } from '../components.js'
import { html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { issueCardSection } from './cards.js'
import { act, actionForm, apiCtx, canChange, doneText } from './changes.js'
import { amountInput, moneyField, optional, pageOf, pathParam, queryText } from './form-input.js'
import {
  cardsTable,
  eventsSection,
  money,
  objectLink,
  statusBadge,
  when,
} from './object-display.js'
import { orProblem, problemBox, type Problem } from './refusals.js'

export const ACCOUNTS = '/console/accounts'

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const filters = { cardholder_id: queryText(ctx, 'cardholder_id') }
  const page = await orProblem(ctx, 'Accounts', () =>
    listAccounts(ctx.deps, apiCtx(ctx), {
      ...pageOf(ctx),
      ...(filters.cardholder_id ? { cardholder_id: filters.cardholder_id } : {}),
    }),
  )
  if ('sent' in page) return page.sent
  const names = await cardholderNames(
    ctx.deps.db,
    apiCtx(ctx),
    page.data.map((a) => a.cardholder_id),
  )
  return ctx.render({
    title: 'Accounts',
    body: html`${getForm(ACCOUNTS, html`<div>${field({ name: 'cardholder_id', label: 'Cardholder id', value: filters.cardholder_id, hint: 'chd_…' })}</div><div><button type="submit" class="secondary">Filter</button></div>`, 'Filter accounts')}
<p class="muted">Open an account from its cardholder's page.</p>
${table({
  caption: 'Accounts, newest first',
  rows: page.data,
  empty: 'No accounts match.',
  columns: [
    { header: 'Account', cell: (a) => objectLink(a.id) },
    { header: 'Cardholder', cell: (a) => objectLink(a.cardholder_id, names.get(a.cardholder_id)) },
    { header: 'Status', cell: (a) => statusBadge(a.status) },
    { header: 'Ledger', numeric: true, cell: (a) => money(a.ledger_balance, a.currency) },
    { header: 'Held', numeric: true, cell: (a) => money(a.held_balance, a.currency) },
    { header: 'Available', numeric: true, cell: (a) => money(a.available_balance, a.currency) },
    { header: 'Opened', cell: (a) => when(a.created_at) },
  ],
})}${cursorPager(ACCOUNTS, filters, page.next_cursor, !queryText(ctx, 'after'))}`,
  })
}

async function capabilities(ctx: PageContext, accountId: string): Promise<readonly string[]> {
  return (await accountProgramOf(ctx.deps, apiCtx(ctx), accountId))?.capabilities ?? []
}

async function detailPage(
  ctx: PageContext,
  id: string,
  problem?: Problem,
  status = 200,
): Promise<FastifyReply> {
  const api = apiCtx(ctx)
  const read = await orProblem(ctx, 'Account', async () => {
    const account = await retrieveAccount(ctx.deps, api, id)
    const [cardholder, cards, holds, entries, caps, programs] = await Promise.all([
      retrieveCardholder(ctx.deps, api, account.cardholder_id),
      listCards(ctx.deps, api, '/v1/cards', { account_id: id }, { limit: 100 }),
      listAuthorizations(ctx.deps, api, { account_id: id, status: 'pending' }, { limit: 100 }),
      listEntries(ctx.deps, api, id, pageOf(ctx)),
      capabilities(ctx, id),
      listPrograms(ctx.deps, api, { limit: 100 }),
    ])
    return {
      account,
      cardholder,
      cards,
      holds,
      entries,
      caps,
      program: programs.data.find((p) => p.id === account.program_id),
    }
  })
  if ('sent' in read) return read.sent
  const { account: a, cardholder, cards, holds, entries, caps, program } = read
  const path = `${ACCOUNTS}/${a.id}`
  const write = canChange(ctx)
  const statusTool =
    write && caps.includes('account_status')
      ? a.status === 'open'
        ? actionForm(
            ctx,
            `${path}/block`,
            'Block the account',
            'Block account',
            html`${selectField(
              'reason',
              'Reason',
              BLOCK_REASONS.map((r): [string, string] => [r, r]),
              'requested',
              { id: 'block-reason' },
            )}`,
            'danger',
          )
        : actionForm(ctx, `${path}/unblock`, 'Unblock the account', 'Unblock account')
      : html``
  const creditTool =
    write && caps.includes('account_credit')
      ? html`<section class="card" aria-labelledby="credit-h"><h2 id="credit-h">Credit the account</h2>
<p class="muted">Adds money to the balance, as POST /v1/accounts/{id}/credit does${ctx.scope!.environment === 'sandbox' ? ' (in the sandbox: test funding)' : ''}.</p>
${actionForm(
  ctx,
  `${path}/credit`,
  'Credit the account',
  'Credit account',
  html`${moneyField('amount', 'credit-amount', 'Amount', a.currency, { required: true })}
${field({ name: 'reference', id: 'credit-reference', label: 'Reference (optional)', maxlength: 255 })}`,
  'primary',
)}</section>`
      : html``
  return ctx.render(
    {
      title: `Account ${a.currency}`,
      body: html`${problemBox(problem)}${details([
        ['Account', html`<code>${a.id}</code>`],
        ['Status', statusBadge(a.status)],
        ['Ledger balance', money(a.ledger_balance, a.currency)],
        ['Held', money(a.held_balance, a.currency)],
        ['Available', money(a.available_balance, a.currency)],
        [
          'Cardholder',
          objectLink(a.cardholder_id, `${cardholder.first_name} ${cardholder.last_name}`),
        ],
        ['Program', html`<code>${a.program_id}</code>`],
        ['At the processor', a.has_upstream_reference ? 'yes' : 'not yet'],
        ['Opened', when(a.created_at)],
      ])}
${statusTool ? html`<div class="actions">${statusTool}</div>` : ''}
${creditTool}
<h2>Holds</h2>${table({
        caption: 'Pending authorizations holding money on this account',
        rows: holds.data,
        empty: 'Nothing is held.',
        columns: [
          { header: 'Authorization', cell: (h) => objectLink(h.id) },
          { header: 'Merchant', cell: (h) => h.merchant.name },
          { header: 'Held', numeric: true, cell: (h) => money(h.held_amount, h.currency) },
          { header: 'Expires', cell: (h) => when(h.expires_at) },
        ],
      })}
<h2>Cards</h2>${cardsTable('Cards spending from this account', cards.data)}
${write && a.status === 'open' ? issueCardSection(ctx, a, cardholder, program) : ''}
<h2>Ledger</h2>${table({
        caption: 'Ledger entries, newest first, with the balances after each',
        rows: entries.data,
        empty: 'No entries yet.',
        columns: [
          { header: 'Type', cell: (e) => String(e.type).replace(/_/g, ' ') },
          { header: 'Amount', numeric: true, cell: (e) => money(e.amount, e.currency) },
          {
            header: 'Ledger after',
            numeric: true,
            cell: (e) => money(e.ledger_balance_after, e.currency),
          },
          {
            header: 'Held after',
            numeric: true,
            cell: (e) => money(e.held_balance_after, e.currency),
          },
          {
            header: 'Available after',
            numeric: true,
            cell: (e) => money(e.available_balance_after, e.currency),
          },
          { header: 'Source', cell: (e) => objectLink(e.source_id) },
          { header: 'Reference', cell: (e) => e.reference ?? '' },
          { header: 'At', cell: (e) => when(e.created_at) },
        ],
      })}${cursorPager(path, {}, entries.next_cursor, !queryText(ctx, 'after'))}
${await eventsSection(ctx, a.id, a.created_at)}`,
    },
    status,
  )
}

/** A capability the account's program does not mount: the 404 /v1 answers for the route. */
function unmounted(ctx: PageContext): FastifyReply {
  return ctx.render(
    {
      title: 'Page not found',
      body: html`<p>This account's program does not offer this operation.</p>`,
      flash: null,
    },
    404,
  )
}

/** Accounts: the list, one account (balances, holds, cards, ledger with running balances); open, credit, block and unblock where the program mounts them. */
export const accountObjectPages: ConsolePage = {
  name: 'accounts',
  register(router) {
    router.get(ACCOUNTS, 'organization', (ctx) => listPage(ctx))
    router.get(`${ACCOUNTS}/:id`, 'organization', (ctx) => detailPage(ctx, pathParam(ctx, 'id')))

    router.post(ACCOUNTS, 'organization', async (ctx) => {
      const cardholderId = ctx.text('cardholder_id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/accounts',
        status: 201,
        schema: AccountCreateRequest,
        action: 'account.created',
        body: {
          program_id: ctx.text('program_id'),
          cardholder_id: cardholderId,
          currency: ctx.text('currency'),
        },
        run: (body, unit) => createAccount(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) {
        return ctx.render(
          {
            title: 'The account was not opened',
            body: html`${problemBox(outcome.problem)}<p>${objectLink(cardholderId, 'Back to the cardholder')}</p>`,
            flash: null,
          },
          outcome.status,
        )
      }
      const account = outcome.object as AccountView
      return ctx.redirect(`${ACCOUNTS}/${account.id}`, {
        kind: 'ok',
        text: doneText(outcome, `Account opened in ${account.currency}.`),
      })
    })

    router.post(`${ACCOUNTS}/:id/credit`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      if (!(await capabilities(ctx, id)).includes('account_credit')) return unmounted(ctx)
      const account = await orProblem(ctx, 'Account', () =>
        retrieveAccount(ctx.deps, apiCtx(ctx), id),
      )
      if ('sent' in account) return account.sent
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/accounts/${id}/credit`,
        schema: AccountAdjustmentRequest,
        action: 'account.credited',
        body: () => ({
          amount: amountInput(ctx.text('amount'), account.currency) ?? 0,
          ...(optional(ctx, 'reference') ? { reference: optional(ctx, 'reference') } : {}),
        }),
        run: async (body, unit) =>
          (await adjustBalance(unit, apiCtx(ctx), id, 'credit', body)).account,
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      const after = outcome.object as AccountView
      return ctx.redirect(`${ACCOUNTS}/${id}`, {
        kind: 'ok',
        text: doneText(
          outcome,
          `Credited. Available: ${money(after.available_balance, after.currency)}.`,
        ),
      })
    })

    for (const [op, to] of [
      ['block', 'blocked'],
      ['unblock', 'open'],
    ] as const) {
      router.post(`${ACCOUNTS}/:id/${op}`, 'organization', async (ctx) => {
        const id = pathParam(ctx, 'id')
        if (!(await capabilities(ctx, id)).includes('account_status')) return unmounted(ctx)
        const reason = optional(ctx, 'reason')
        const outcome = await act(ctx, {
          method: 'POST',
          path: `/v1/accounts/${id}/${op}`,
          schema: AccountBlockRequest,
          action: `account.${to === 'open' ? 'unblocked' : 'blocked'}`,
          body: reason ? { reason } : {},
          run: (body, unit) => setAccountStatus(unit, apiCtx(ctx), id, to, body),
        })
        if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
        return ctx.redirect(`${ACCOUNTS}/${id}`, {
          kind: 'ok',
          text: doneText(outcome, to === 'open' ? 'Account unblocked.' : 'Account blocked.'),
        })
      })
    }
  },
}
