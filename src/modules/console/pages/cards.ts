import type { FastifyReply } from 'fastify'
import { cardholderNames } from '../../cardholders/index.js'
import { retrieveAccount, type AccountView } from '../../accounts/index.js'
import {
  authorize,
  listAuthorizations,
  SimulateAuthorization,
  type AuthorizationView,
} from '../../authorizations/index.js'
import type { CardholderView } from '../../cardholders/index.js'
import {
  CardCreate,
  CardReplace,
  CardUpdate,
  brandName,
  changeStatus,
  createCard,
  issueNow,
  listCards,
  maskedCard,
  replaceCard,
  retrieveCard,
  shipCard,
  ShipRequest,
  SPENDING_INTERVALS,
  updateCard,
  type CardView,
} from '../../cards/index.js'
import type { ProgramView } from '../../programs/index.js'
import {
  listTransactions,
  merchantRefund,
  SimulateRefund,
  type TransactionView,
} from '../../transactions/index.js'
import {
  cursorPager,
  details,
  field,
  getForm,
  minorUnits,
  selectField,
  table,
} from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { act, actionForm, apiCtx, canChange, doneText, type Outcome } from './changes.js'
import { amountInput, moneyField, optional, pageOf, pathParam, queryText } from './form-input.js'
import { amounts, eventsSection, money, objectLink, statusBadge, when } from './object-display.js'
import { orProblem, problemBox, type Problem } from './refusals.js'
import { cardRulesSection } from './authorization-rules.js'
import { sandboxOnly, sandboxPanel } from './sandbox.js'
import { remainingSection } from './spend-limits.js'

export const CARDS = '/console/cards'
const STATUSES = ['pending', 'inactive', 'active', 'frozen', 'expired', 'closed']
const STATUS_ACTIONS = {
  activate: 'card.activated',
  freeze: 'card.frozen',
  unfreeze: 'card.unfrozen',
  close: 'card.closed',
} as const
const REPLACE_REASONS: [string, string][] = [
  ['lost', 'Lost (closes this card now)'],
  ['stolen', 'Stolen (closes this card now)'],
  ['damaged', 'Damaged (closes it when the new one is activated)'],
  ['expiring', 'Expiring (closes it when the new one is activated)'],
]

/** A card as people name it: brand and last four digits (the number is never shown). */
export function cardLabel(k: Pick<CardView, 'brand' | 'last4'>): string {
  return k.last4 ? maskedCard(k) : `${brandName(k.brand)} (not issued yet)`
}

/** The "Issue a card" form of an account page: the cardholder's name and address filled in. */
export function issueCardSection(
  ctx: PageContext,
  account: AccountView,
  cardholder: CardholderView,
  program?: ProgramView,
): Html {
  const a = cardholder.address
  const embossed = `${cardholder.first_name} ${cardholder.last_name}`
    .toUpperCase()
    .replace(/[^A-Z0-9 .,'/&-]/g, '')
    .slice(0, 26)
  const factors = program?.form_factors ?? ['virtual', 'physical']
  const types = program?.card_types ?? ['debit', 'prepaid', 'credit']
  return html`<section class="card" aria-labelledby="issue-h"><h2 id="issue-h">Issue a card</h2>
${actionForm(
  ctx,
  CARDS,
  'Issue a card',
  'Issue card',
  html`<input type="hidden" name="account_id" value="${account.id}"><input type="hidden" name="cardholder_id" value="${cardholder.id}">
<div class="grid2"><div>${selectField(
    'form_factor',
    'Form factor',
    factors.map((f): [string, string] => [f, f]),
    factors[0],
    { id: 'issue-form-factor' },
  )}</div>
<div>${selectField(
    'card_type',
    'Card type',
    types.map((t): [string, string] => [t, t]),
    types[0],
    { id: 'issue-card-type' },
  )}</div></div>
${field({ name: 'embossed_name', id: 'issue-embossed', label: 'Name on the card', value: embossed, maxlength: 26, required: true })}
<fieldset class="checks"><legend>Delivery address</legend>
${field({ name: 'd_name', id: 'issue-d-name', label: 'Recipient', value: `${cardholder.first_name} ${cardholder.last_name}`, maxlength: 200 })}
${field({ name: 'd_line1', id: 'issue-d-line1', label: 'Street and number', value: a?.line1 ?? '', maxlength: 200 })}
${field({ name: 'd_city', id: 'issue-d-city', label: 'City', value: a?.city ?? '', maxlength: 100 })}
<div class="grid2"><div>${field({ name: 'd_postal_code', id: 'issue-d-postal', label: 'Postal code', value: a?.postal_code ?? '', maxlength: 20 })}</div>
<div>${field({ name: 'd_country', id: 'issue-d-country', label: 'Country', value: a?.country ?? '', maxlength: 3, hint: 'Three letters, like USA.' })}</div></div></fieldset>`,
  'primary',
)}</section>`
}

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const filters = { status: queryText(ctx, 'status') }
  const status = STATUSES.includes(filters.status) ? filters.status : undefined
  const page = await orProblem(ctx, 'Cards', () =>
    listCards(ctx.deps, apiCtx(ctx), '/v1/cards', { status }, pageOf(ctx)),
  )
  if ('sent' in page) return page.sent
  const names = await cardholderNames(
    ctx.deps.db,
    apiCtx(ctx),
    page.data.map((k) => k.cardholder_id),
  )
  return ctx.render({
    title: 'Cards',
    body: html`${getForm(CARDS, html`<div>${selectField('status', 'Status', [['', 'Any'], ...STATUSES.map((s): [string, string] => [s, s])], filters.status)}</div><div><button type="submit" class="secondary">Filter</button></div>`, 'Filter cards')}
<p class="muted">Issue a card from its account's page.</p>
${table({
  caption: 'Cards, newest first',
  rows: page.data,
  empty: 'No cards match.',
  columns: [
    { header: 'Card', cell: (k) => objectLink(k.id, cardLabel(k)) },
    { header: 'Form', cell: (k) => k.form_factor },
    { header: 'Status', cell: (k) => statusBadge(k.status) },
    { header: 'Cardholder', cell: (k) => objectLink(k.cardholder_id, names.get(k.cardholder_id)) },
    { header: 'Account', cell: (k) => objectLink(k.account_id) },
    { header: 'Created', cell: (k) => when(k.created_at) },
  ],
})}${cursorPager(CARDS, filters, page.next_cursor, !queryText(ctx, 'after'))}`,
  })
}

const INTERVAL_LABELS: Record<(typeof SPENDING_INTERVALS)[number], string> = {
  per_authorization: 'Per authorization',
  daily: 'Daily',
  weekly: 'Weekly',
  monthly: 'Monthly',
  all_time: 'All time',
}
/** The list controls the form edits: field name (the API's), label, hint. */
const LIST_FIELDS: [
  name: 'allowed_mccs' | 'blocked_mccs' | 'allowed_countries' | 'blocked_countries',
  label: string,
  hint: string,
][] = [
  ['allowed_mccs', 'Allowed MCCs (only these)', 'Four digits each, like 5411; empty: any.'],
  ['blocked_mccs', 'Blocked MCCs', 'Four digits each, like 7995.'],
  [
    'allowed_countries',
    'Allowed countries (only these)',
    'Three letters each, like USA; empty: any.',
  ],
  ['blocked_countries', 'Blocked countries', 'Three letters each, like PRK.'],
]

function controlsText(k: CardView, currency: string): Html {
  const c = k.spending_controls
  const parts = [
    ...c.spending_limits.map(
      (l) => `${l.interval.replace(/_/g, ' ')} limit ${money(l.amount, currency)}`,
    ),
    c.allowed_mccs.length ? `only MCCs ${c.allowed_mccs.join(', ')}` : '',
    c.blocked_mccs.length ? `blocked MCCs ${c.blocked_mccs.join(', ')}` : '',
    c.allowed_countries.length ? `only countries ${c.allowed_countries.join(', ')}` : '',
    c.blocked_countries.length ? `blocked countries ${c.blocked_countries.join(', ')}` : '',
  ].filter((p) => p)
  return parts.length ? html`${parts.join('; ')}` : html`<span class="muted">none</span>`
}

/** Travel mode: the eSIM followed, where it is, and whether its country is allowed now (docs/cards.md). */
function travelText(k: CardView): Html {
  const t = k.travel_mode
  if (!t) return html`<span class="muted">off</span>`
  const where = t.country ? `eSIM in ${t.country}` : 'no country reported yet'
  const state = t.active
    ? `active: ${where}${t.country ? ", allowed besides the card's countries" : ''}`
    : `inactive (the eSIM's bundle is not valid): ${where}`
  return html`${objectLink(t.esim_id)} <span id="travel-mode">${state}</span>`
}

function lifecycleButtons(ctx: PageContext, k: CardView): Html {
  const path = `${CARDS}/${k.id}`
  const moves: Html[] = []
  if (k.status === 'inactive')
    moves.push(
      actionForm(ctx, `${path}/activate`, 'Activate the card', 'Activate', html``, 'primary'),
    )
  if (k.status === 'active')
    moves.push(actionForm(ctx, `${path}/freeze`, 'Freeze the card', 'Freeze'))
  if (k.status === 'frozen')
    moves.push(
      actionForm(ctx, `${path}/unfreeze`, 'Unfreeze the card', 'Unfreeze', html``, 'primary'),
    )
  const close =
    k.status !== 'closed' && k.status !== 'pending'
      ? html`<p><a href="${path}/close">Close this card…</a></p>`
      : html``
  return html`<div class="actions">${moves}</div>${close}`
}

async function detailPage(
  ctx: PageContext,
  id: string,
  problem?: Problem,
  status = 200,
): Promise<FastifyReply> {
  const api = apiCtx(ctx)
  const read = await orProblem(ctx, 'Card', async () => {
    const card = await retrieveCard(ctx.deps, api, id)
    const [account, authorizations, transactions] = await Promise.all([
      retrieveAccount(ctx.deps, api, card.account_id),
      listAuthorizations(ctx.deps, api, { card_id: id }, { limit: 25 }),
      listTransactions(ctx.deps, api, { card_id: id }, { limit: 25 }),
    ])
    return { card, account, authorizations, transactions }
  })
  if ('sent' in read) return read.sent
  const { card: k, account, authorizations, transactions } = read
  const path = `${CARDS}/${k.id}`
  const write = canChange(ctx) && k.status !== 'closed'
  const currency = account.currency
  const limit = (interval: string) =>
    k.spending_controls.spending_limits.find((l) => l.interval === interval)?.amount
  const asUnits = (minor: number | undefined) =>
    minor === undefined ? '' : (minor / 10 ** minorUnits(currency)).toFixed(minorUnits(currency))
  const manage = write
    ? html`${lifecycleButtons(ctx, k)}
<section class="card" aria-labelledby="replace-h"><h2 id="replace-h">Replace the card</h2>
${actionForm(ctx, `${path}/replace`, 'Replace the card', 'Replace card', selectField('reason', 'Reason', REPLACE_REASONS, 'damaged', { id: 'replace-reason' }))}</section>
<section class="card" aria-labelledby="controls-h"><h2 id="controls-h">Spending controls</h2>
<p class="muted">Limits in the account's currency; an empty field removes that limit or list. Lists are separated by commas. A control the program's processor cannot enforce is refused, naming what it supports.</p>
${actionForm(
  ctx,
  `${path}/controls`,
  'Edit spending controls',
  'Save spending controls',
  html`<input type="hidden" name="currency" value="${currency}">
<div class="grid2">${SPENDING_INTERVALS.map((interval) => html`<div>${moneyField(interval, `ctl-${interval}`, INTERVAL_LABELS[interval], currency, { value: asUnits(limit(interval)) })}</div>`)}</div>
<div class="grid2">${LIST_FIELDS.map(([name, label, hint]) => html`<div>${field({ name, id: `ctl-${name}`, label, value: k.spending_controls[name].join(', '), hint })}</div>`)}</div>`,
)}</section>`
    : html``
  const simulate =
    k.status !== 'closed'
      ? sandboxPanel(
          ctx,
          'Simulate on this card',
          html`
${k.status === 'pending' ? actionForm(ctx, `${path}/issue`, 'Issue the card now', 'Issue now (skip the processor delay)', html``, 'primary') : ''}
<h3>Authorization</h3>
${actionForm(
  ctx,
  `${path}/authorizations`,
  'Simulate authorization',
  'Simulate authorization',
  html`<div class="grid2"><div>${field({ name: 'amount', id: 'sim-amount', label: 'Amount', required: true, inputmode: 'decimal', hint: 'In the currency below, like 12.50.' })}</div>
<div>${field({ name: 'currency', id: 'sim-currency', label: 'Currency', value: currency, required: true, maxlength: 3 })}</div></div>
${field({ name: 'merchant_name', id: 'sim-merchant', label: 'Merchant name', value: 'Corner Cafe', required: true, maxlength: 200 })}
<div class="grid2"><div>${field({ name: 'mcc', id: 'sim-mcc', label: 'MCC', value: '5814', inputmode: 'numeric', maxlength: 4, hint: 'Merchant category code, four digits.' })}</div>
<div>${field({ name: 'country', id: 'sim-country', label: 'Merchant country', value: 'USA', maxlength: 3, hint: 'Three letters.' })}</div></div>`,
  'primary',
)}
<h3>Merchant refund</h3>
${actionForm(
  ctx,
  `${path}/refunds`,
  'Simulate a merchant refund',
  'Simulate merchant refund',
  html`<div class="grid2"><div>${field({ name: 'amount', id: 'mref-amount', label: 'Amount', required: true, inputmode: 'decimal', hint: 'In the currency below.' })}</div>
<div>${field({ name: 'currency', id: 'mref-currency', label: 'Currency', value: currency, required: true, maxlength: 3 })}</div></div>
${field({ name: 'merchant_name', id: 'mref-merchant', label: 'Merchant name', value: 'Corner Cafe', required: true, maxlength: 200 })}`,
)}
${k.form_factor === 'physical' && k.shipping && k.shipping.status !== 'delivered' ? html`<h3>Shipping</h3>${actionForm(ctx, `${path}/ship`, 'Ship the card', k.shipping.status === 'pending' ? 'Mark shipped' : 'Mark delivered')}` : ''}`,
        )
      : html``
  const d = k.delivery_address
  return ctx.render(
    {
      title: cardLabel(k),
      body: html`${problemBox(problem)}${details([
        ['Card', html`<code>${k.id}</code>`],
        ['Status', statusBadge(k.status)],
        ['Number', k.last4 ? `•••• •••• •••• ${k.last4}` : 'not issued yet'],
        ['Expires', k.exp_month ? `${String(k.exp_month).padStart(2, '0')}/${k.exp_year}` : null],
        ['Form factor', `${k.form_factor} ${k.card_type}`],
        ['Name on the card', k.embossed_name],
        ['Cardholder', objectLink(k.cardholder_id)],
        ['Account', objectLink(k.account_id)],
        ['Spending controls', controlsText(k, currency)],
        ['Travel mode', travelText(k)],
        [
          'Shipping',
          k.shipping
            ? html`${statusBadge(k.shipping.status)}${k.shipping.shipped_at ? html` shipped ${when(k.shipping.shipped_at)}` : ''}`
            : 'not shipped (virtual)',
        ],
        [
          'Delivery address',
          d ? `${d.name}, ${d.line1}, ${d.postal_code} ${d.city}, ${d.country}` : null,
        ],
        ['Replaces', objectLink(k.replacement_for)],
        ['Replaced by', objectLink(k.replaced_by)],
        ['PIN', k.pin_set ? 'set' : 'not set'],
        ['Created', when(k.created_at)],
      ])}
${manage}${simulate}
${await remainingSection(ctx, k.id)}
${await cardRulesSection(ctx, k.id)}
<h2>Authorizations</h2>${table({
        caption: 'Latest authorizations of this card',
        rows: authorizations.data,
        empty: 'No authorization yet.',
        columns: [
          { header: 'Authorization', cell: (x) => objectLink(x.id) },
          { header: 'Merchant', cell: (x) => x.merchant.name },
          { header: 'Amount', numeric: true, cell: (x) => amounts(x) },
          { header: 'Status', cell: (x) => statusBadge(x.status) },
          { header: 'At', cell: (x) => when(x.created_at) },
        ],
      })}
<h2>Transactions</h2>${table({
        caption: 'Latest transactions of this card',
        rows: transactions.data,
        empty: 'No transaction yet.',
        columns: [
          { header: 'Transaction', cell: (x) => objectLink(x.id) },
          { header: 'Type', cell: (x) => x.type },
          { header: 'Amount', numeric: true, cell: (x) => amounts(x) },
          { header: 'Status', cell: (x) => statusBadge(x.status) },
        ],
      })}
${await eventsSection(ctx, k.id, k.created_at)}`,
    },
    status,
  )
}

function list(text: string, upper = false): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => (upper ? s.toUpperCase() : s).trim())
    .filter((s) => s !== '')
}

/** Answers a card change: its page with the flash, or the page again with the refusal. */
function after(
  ctx: PageContext,
  id: string,
  outcome: Outcome<unknown>,
  text: string,
  to?: string,
): Promise<FastifyReply> | FastifyReply {
  if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
  return ctx.redirect(to ?? `${CARDS}/${id}`, { kind: 'ok', text: doneText(outcome, text) })
}

/** Cards: the list, one card (masked) with its controls, shipping, authorizations and transactions; issue, lifecycle moves, replace, controls; sandbox tools. */
export const cardPages: ConsolePage = {
  name: 'cards',
  register(router) {
    router.get(CARDS, 'organization', (ctx) => listPage(ctx))
    router.get(`${CARDS}/:id`, 'organization', (ctx) => detailPage(ctx, pathParam(ctx, 'id')))

    router.post(CARDS, 'organization', async (ctx) => {
      const accountId = ctx.text('account_id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/cards',
        status: 201,
        schema: CardCreate,
        action: 'card.created',
        body: {
          cardholder_id: ctx.text('cardholder_id'),
          account_id: accountId,
          form_factor: ctx.text('form_factor'),
          card_type: ctx.text('card_type'),
          embossed_name: ctx.text('embossed_name'),
          delivery_address: {
            name: ctx.text('d_name'),
            line1: ctx.text('d_line1'),
            city: ctx.text('d_city'),
            postal_code: ctx.text('d_postal_code'),
            country: ctx.text('d_country').toUpperCase(),
          },
        },
        run: (body, unit) => createCard(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) {
        return ctx.render(
          {
            title: 'The card was not issued',
            body: html`${problemBox(outcome.problem)}<p>${objectLink(accountId, 'Back to the account')}</p>`,
            flash: null,
          },
          outcome.status,
        )
      }
      const card = outcome.object as CardView
      return ctx.redirect(`${CARDS}/${card.id}`, {
        kind: 'ok',
        text: doneText(
          outcome,
          `Card created (${card.form_factor}); the processor issues it shortly.`,
        ),
      })
    })

    // Closing cannot be undone: the card page links here, and only this page's form closes it.
    router.get(`${CARDS}/:id/close`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const card = await orProblem(ctx, 'Card', () => retrieveCard(ctx.deps, apiCtx(ctx), id))
      if ('sent' in card) return card.sent
      const back = `${CARDS}/${card.id}`
      if (!canChange(ctx) || card.status === 'closed' || card.status === 'pending')
        return ctx.redirect(back, {
          kind: 'info',
          text:
            card.status === 'closed'
              ? 'This card is closed already.'
              : 'This card cannot be closed from here.',
        })
      return ctx.render({
        title: `Close card •••• ${card.last4 ?? ''}?`,
        body: html`<div class="card"><p>Close the ${card.form_factor} card <strong>•••• ${card.last4 ?? '····'}</strong> of ${card.embossed_name} (<code>${card.id}</code>)?</p>
<p>Every authorization on it is declined from now on, and it cannot be frozen or activated again. <strong>This cannot be undone</strong>: a cardholder who needs a card again gets a new one (or a replacement, which keeps nothing of this one but its account).</p>
${actionForm(ctx, `${back}/close`, 'Confirm closing the card', 'Close card', html``, 'danger')}
<p><a href="${back}">Cancel: keep the card</a></p></div>`,
      })
    })

    for (const op of ['activate', 'freeze', 'unfreeze', 'close'] as const) {
      router.post(`${CARDS}/:id/${op}`, 'organization', async (ctx) => {
        const id = pathParam(ctx, 'id')
        const outcome = await act(ctx, {
          method: 'POST',
          path: `/v1/cards/${id}/${op}`,
          body: {},
          action: STATUS_ACTIONS[op],
          run: (_body, unit) => changeStatus(unit, apiCtx(ctx), id, op),
        })
        return after(
          ctx,
          id,
          outcome,
          `Card ${outcome.ok ? (outcome.object as CardView).status : ''}.`,
        )
      })
    }

    router.post(`${CARDS}/:id/replace`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/cards/${id}/replace`,
        status: 201,
        schema: CardReplace,
        action: 'card.replaced',
        body: { reason: ctx.text('reason') },
        run: (body, unit) => replaceCard(unit, apiCtx(ctx), id, body.reason),
      })
      return after(
        ctx,
        id,
        outcome,
        'Replacement card created.',
        outcome.ok ? `${CARDS}/${(outcome.object as CardView).id}` : undefined,
      )
    })

    router.post(`${CARDS}/:id/controls`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const currency = /^[A-Z]{3}$/.test(ctx.text('currency')) ? ctx.text('currency') : 'USD'
      const card = await orProblem(ctx, 'Card', () => retrieveCard(ctx.deps, apiCtx(ctx), id))
      if ('sent' in card) return card.sent
      const outcome = await act(ctx, {
        method: 'PATCH',
        path: `/v1/cards/${id}`,
        schema: CardUpdate,
        action: 'card.updated',
        body: () => {
          const limits = SPENDING_INTERVALS.flatMap((interval) => {
            const amount = amountInput(ctx.text(interval), currency, interval)
            return amount === null ? [] : [{ amount, interval }]
          })
          const lists = Object.fromEntries(
            LIST_FIELDS.map(([name]) => [name, list(ctx.text(name), name.endsWith('countries'))]),
          )
          return { spending_controls: { spending_limits: limits, ...lists } }
        },
        run: (body, unit) => updateCard(unit, apiCtx(ctx), id, body),
      })
      return after(ctx, id, outcome, 'Spending controls saved.')
    })

    // Sandbox tools: production answers 404, as /v1's simulator routes do.
    router.post(`${CARDS}/:id/issue`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/simulate/cards/${id}/issue`,
        body: {},
        action: 'simulate.card_issued',
        run: (_body, unit) => issueNow(unit, apiCtx(ctx), id),
      })
      return after(ctx, id, outcome, 'Card issued.')
    })

    router.post(`${CARDS}/:id/ship`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/simulate/cards/${id}/ship`,
        body: {},
        schema: ShipRequest,
        action: 'simulate.card_shipped',
        run: (_body, unit) => shipCard(unit, apiCtx(ctx), id, undefined),
      })
      return after(
        ctx,
        id,
        outcome,
        `Shipping: ${outcome.ok ? ((outcome.object as CardView).shipping?.status ?? '') : ''}.`,
      )
    })

    router.post(`${CARDS}/:id/authorizations`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const currency = ctx.text('currency').trim().toUpperCase()
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/simulate/authorizations',
        status: 201,
        schema: SimulateAuthorization,
        action: 'simulate.authorization',
        body: () => ({
          card_id: id,
          amount:
            amountInput(ctx.text('amount'), /^[A-Z]{3}$/.test(currency) ? currency : 'USD') ?? 0,
          currency,
          merchant: {
            name: ctx.text('merchant_name'),
            ...(optional(ctx, 'mcc') ? { mcc: optional(ctx, 'mcc') } : {}),
            ...(optional(ctx, 'country')
              ? { country: optional(ctx, 'country')!.toUpperCase() }
              : {}),
          },
        }),
        run: (body, unit) => authorize(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      const a = outcome.object as AuthorizationView
      return ctx.redirect(`/console/authorizations/${a.id}`, {
        kind: a.approved ? 'ok' : 'info',
        text: doneText(
          outcome,
          a.approved
            ? `Authorization approved: ${money(a.amount, a.currency)} held.`
            : 'Authorization declined.',
        ),
      })
    })

    router.post(`${CARDS}/:id/refunds`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const currency = ctx.text('currency').trim().toUpperCase()
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/simulate/refunds',
        status: 201,
        schema: SimulateRefund,
        action: 'simulate.merchant_refund',
        body: () => ({
          card_id: id,
          amount:
            amountInput(ctx.text('amount'), /^[A-Z]{3}$/.test(currency) ? currency : 'USD') ?? 0,
          currency,
          merchant: { name: ctx.text('merchant_name') },
        }),
        run: (body, unit) => merchantRefund(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      const t = outcome.object as TransactionView
      return ctx.redirect(`/console/transactions/${t.id}`, {
        kind: 'ok',
        text: doneText(outcome, `Merchant refund of ${amounts(t)} credited.`),
      })
    })
  },
}
