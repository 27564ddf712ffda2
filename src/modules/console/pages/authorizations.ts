import type { FastifyReply } from 'fastify'
import { cardholderNames } from '../../cardholders/index.js'
import { cardLabels } from '../../cards/index.js'
import { cardLabel } from './cards.js'
import {
  AUTHORIZATION_STATUSES,
  capture,
  CaptureRequest,
  expire,
  increment,
  IncrementRequest,
  listAuthorizations,
  retrieveAuthorization,
  reverse,
  ReverseRequest,
  type AuthorizationView,
  type DeclineReason,
} from '../../authorizations/index.js'
import { listTransactions, type TransactionView } from '../../transactions/index.js'
import { cursorPager, details, field, getForm, selectField, table } from '../components.js'
import type { AppDeps } from '../../../app-deps.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { act, actionForm, apiCtx, doneText, type Outcome } from './changes.js'
import { amountInput, moneyField, pageOf, pathParam, queryText } from './form-input.js'
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

export const AUTHORIZATIONS = '/console/authorizations'

/** Why an authorization was declined, in words (the API's decline_reason beside it). */
export const DECLINE_WORDS: Record<DeclineReason, string> = {
  card_inactive: 'The card is not active yet (not issued, or a physical card not activated).',
  card_frozen: 'The card is frozen.',
  card_closed: 'The card is closed.',
  card_expired: 'The card has expired.',
  invalid_expiry: 'The expiry date presented does not match the card.',
  invalid_cvc: 'The security code presented does not match the card.',
  token_inactive: 'The network token used is not active.',
  account_blocked: 'The account the card spends from is blocked.',
  currency_mismatch: "The currency is not the account's currency.",
  mcc_blocked: "The merchant's category is not allowed by the card's spending controls.",
  country_blocked: "The merchant's country is not allowed by the card's spending controls.",
  spending_limit: "The amount is over one of the card's spending limits.",
  rule_declined: 'An authorization rule declined it (its rule_id is on the authorization).',
  insufficient_funds: 'The available balance is lower than the amount.',
  integrator_declined: 'Your authorization endpoint declined it.',
  integrator_unavailable:
    'Your authorization endpoint did not answer in time or answered something else, and its stand-in is to decline.',
}

export function declineInWords(reason: string | null): Html {
  if (!reason) return html``
  return html`${DECLINE_WORDS[reason as DeclineReason] ?? reason} <code>${reason}</code>`
}

const STAND_IN_WORDS: Record<string, string> = {
  timeout: 'it did not answer in time',
  error:
    'it answered with an error or could not be reached (or was skipped after repeated failures)',
  invalid_response: 'its answer was not one the service understands',
}

/** Who decided: the service's rules, the organization's authorization endpoint, or the stand-in when the endpoint failed. */
export function decidedBy(d: {
  source: string
  latency_ms: number
  stand_in_reason?: string | null
}): string {
  if (d.source === 'integrator') return `Your authorization endpoint, in ${d.latency_ms} ms`
  if (d.source === 'stand_in')
    return `The stand-in rule, because your authorization endpoint failed: ${STAND_IN_WORDS[d.stand_in_reason ?? ''] ?? d.stand_in_reason ?? 'unknown'} (${d.latency_ms} ms)`
  return "The service's own rules"
}

/** What each authorization rule that applied said of the latest request (none: no rule applied, or none ran). */
function ruleResultsSection(a: AuthorizationView): Html {
  if (a.rule_results.length === 0) return html``
  return html`<h2>Authorization rules</h2>${table({
    caption: 'What each rule said of the latest request, in the order they ran',
    rows: a.rule_results,
    empty: 'No rule applied.',
    columns: [
      { header: 'Rule', cell: (r) => objectLink(r.rule_id) },
      { header: 'Mode', cell: (r) => statusBadge(r.mode) },
      { header: 'Outcome', cell: (r) => statusBadge(r.outcome) },
    ],
  })}`
}

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const filters = { status: queryText(ctx, 'status'), card_id: queryText(ctx, 'card_id') }
  const status = (AUTHORIZATION_STATUSES as readonly string[]).includes(filters.status)
    ? filters.status
    : undefined
  const page = await orProblem(ctx, 'Authorizations', () =>
    listAuthorizations(
      ctx.deps,
      apiCtx(ctx),
      { status, card_id: filters.card_id || undefined },
      pageOf(ctx),
    ),
  )
  if ('sent' in page) return page.sent
  const cards = await cardLabels(
    ctx.deps.db,
    apiCtx(ctx),
    page.data.map((a) => a.card_id),
  )
  const names = await cardholderNames(
    ctx.deps.db,
    apiCtx(ctx),
    [...cards.values()].map((c) => c.cardholderId),
  )
  const cardOf = (id: string) => {
    const c = cards.get(id)
    return c ? cardLabel(c) : undefined
  }
  const holderOf = (id: string) => {
    const c = cards.get(id)
    return c ? objectLink(c.cardholderId, names.get(c.cardholderId)) : ''
  }
  return ctx.render({
    title: 'Authorizations',
    body: html`${getForm(
      AUTHORIZATIONS,
      html`<div>${selectField('status', 'Status', [['', 'Any'], ...AUTHORIZATION_STATUSES.map((s): [string, string] => [s, s])], filters.status)}</div>
<div>${field({ name: 'card_id', label: 'Card id', value: filters.card_id, hint: 'card_…' })}</div><div><button type="submit" class="secondary">Filter</button></div>`,
      'Filter authorizations',
    )}
${table({
  caption: 'Authorizations, newest first',
  rows: page.data,
  empty: 'No authorizations match.',
  columns: [
    { header: 'Authorization', cell: (a) => objectLink(a.id) },
    { header: 'Merchant', cell: (a) => a.merchant.name },
    { header: 'Amount', numeric: true, cell: (a) => amounts(a) },
    { header: 'Status', cell: (a) => statusBadge(a.status) },
    {
      header: 'Decline reason',
      cell: (a) => (a.decline_reason ? html`<code>${a.decline_reason}</code>` : ''),
    },
    { header: 'Card', cell: (a) => objectLink(a.card_id, cardOf(a.card_id)) },
    { header: 'Cardholder', cell: (a) => holderOf(a.card_id) },
    { header: 'At', cell: (a) => when(a.created_at) },
  ],
})}${cursorPager(AUTHORIZATIONS, filters, page.next_cursor, !queryText(ctx, 'after'))}`,
  })
}

async function detailPage(
  ctx: PageContext,
  id: string,
  problem?: Problem,
  status = 200,
): Promise<FastifyReply> {
  const api = apiCtx(ctx)
  const read = await orProblem(ctx, 'Authorization', async () => {
    const authorization = await retrieveAuthorization(ctx.deps, api, id)
    const transactions = await listTransactions(
      ctx.deps,
      api,
      { authorization_id: id },
      { limit: 100 },
    )
    return { authorization, transactions }
  })
  if ('sent' in read) return read.sent
  const { authorization: a, transactions } = read
  const path = `${AUTHORIZATIONS}/${a.id}`
  const tools =
    a.status === 'pending'
      ? sandboxPanel(
          ctx,
          'Simulate the merchant',
          html`
<h3>Capture</h3>${actionForm(ctx, `${path}/capture`, 'Capture the authorization', 'Capture', a.fx ? moneyField('amount', 'cap-amount', 'Amount', a.merchant_currency, { hint: `Empty: what is held (${money(a.held_amount, a.currency)}) in ${a.merchant_currency} at the authorization's rate. Converted at today's rate: if it moved, more or less than is held is captured.` }) : moneyField('amount', 'cap-amount', 'Amount', a.currency, { hint: `Empty: what is held (${money(a.held_amount, a.currency)}).` }), 'primary')}
<h3>Increment</h3>${actionForm(ctx, `${path}/increment`, 'Increment the authorization', 'Increment', moneyField('amount', 'inc-amount', 'Increase by', a.merchant_currency, { required: true }))}
<h3>Reverse</h3>${actionForm(ctx, `${path}/reverse`, 'Reverse the authorization', 'Reverse', moneyField('amount', 'rev-amount', 'Amount', a.merchant_currency, { hint: 'Empty: all of what is held.' }))}
<h3>Expire</h3>${actionForm(ctx, `${path}/expire`, 'Expire the authorization now', 'Expire now', html``, 'danger')}`,
        )
      : html``
  return ctx.render(
    {
      title: `Authorization at ${a.merchant.name}`,
      body: html`${problemBox(problem)}${details([
        ['Authorization', html`<code>${a.id}</code>`],
        ['Status', statusBadge(a.status)],
        ['Decision', a.approved ? 'approved' : html`declined: ${declineInWords(a.decline_reason)}`],
        ['Decided by', decidedBy(a.decision)],
        ...(a.rule_id ? [['Declined by rule', objectLink(a.rule_id)] as [string, Html]] : []),
        ['Amount', money(a.amount, a.currency)],
        ['Merchant amount', money(a.merchant_amount, a.merchant_currency)],
        ['Conversion', a.fx ? conversionInWords(a.fx, a.merchant_currency, a.currency) : null],
        ['Held', money(a.held_amount, a.currency)],
        ['Captured', money(a.captured_amount, a.currency)],
        ['Reversed', money(a.reversed_amount, a.currency)],
        [
          'Merchant',
          `${a.merchant.name}${a.merchant.mcc ? ` · MCC ${a.merchant.mcc}` : ''}${a.merchant.city ? ` · ${a.merchant.city}` : ''}${a.merchant.country ? ` · ${a.merchant.country}` : ''}`,
        ],
        ['Card', objectLink(a.card_id)],
        ['Account', objectLink(a.account_id)],
        ['Network token', a.network_token_id ? html`<code>${a.network_token_id}</code>` : null],
        ['Hold expires', when(a.expires_at)],
        ['Created', when(a.created_at)],
      ])}
${tools}
${ruleResultsSection(a)}
<h2>Requests</h2>${table({
        caption: 'The first request and each increment, oldest first',
        rows: a.request_history,
        empty: 'No request.',
        columns: [
          { header: 'Kind', cell: (r) => r.type },
          { header: 'Amount', numeric: true, cell: (r) => money(r.amount, a.merchant_currency) },
          {
            header: 'Decision',
            cell: (r) =>
              r.approved ? 'approved' : html`declined: ${declineInWords(r.decline_reason)}`,
          },
          { header: 'At', cell: (r) => when(r.created_at) },
        ],
      })}
<h2>Captures</h2>${table({
        caption: 'Transactions of this authorization',
        rows: transactions.data,
        empty: 'Nothing captured yet.',
        columns: [
          { header: 'Transaction', cell: (t) => objectLink(t.id) },
          { header: 'Type', cell: (t) => t.type },
          { header: 'Amount', numeric: true, cell: (t) => amounts(t) },
          { header: 'Status', cell: (t) => statusBadge(t.status) },
        ],
      })}
${await eventsSection(ctx, a.id, a.created_at)}`,
    },
    status,
  )
}

/** Authorizations: the list (status, card), one authorization (decision, decline reason, hold, increments, captures); sandbox: capture, increment, reverse, expire. */
export const authorizationPages: ConsolePage = {
  name: 'authorizations',
  register(router) {
    router.get(AUTHORIZATIONS, 'organization', (ctx) => listPage(ctx))
    router.get(`${AUTHORIZATIONS}/:id`, 'organization', (ctx) =>
      detailPage(ctx, pathParam(ctx, 'id')),
    )

    const simulate = (
      op: 'capture' | 'increment' | 'reverse' | 'expire',
      schema: object | undefined,
      run: (
        ctx: PageContext,
        unit: AppDeps,
        id: string,
        body: any,
      ) => Promise<AuthorizationView | TransactionView>,
      done: (o: any) => string,
    ) => {
      router.post(`${AUTHORIZATIONS}/:id/${op}`, 'organization', async (ctx) => {
        const refused = sandboxOnly(ctx)
        if (refused) return refused
        const id = pathParam(ctx, 'id')
        const current = await orProblem(ctx, 'Authorization', () =>
          retrieveAuthorization(ctx.deps, apiCtx(ctx), id),
        )
        if ('sent' in current) return current.sent
        const outcome: Outcome<AuthorizationView | TransactionView> = await act(ctx, {
          method: 'POST',
          path: `/v1/simulate/authorizations/${id}/${op}`,
          status: op === 'capture' ? 201 : 200,
          schema,
          action: `simulate.authorization_${op}`,
          body: () => {
            // An increment or a reversal is in the merchant's currency, and so is the capture of a foreign
            // authorization (re-rated at the capture's rate); a capture of any other in the account's.
            const reRated = op === 'capture' && current.fx !== null
            const currency =
              op === 'capture' && !reRated ? current.currency : current.merchant_currency
            const amount = op === 'expire' ? null : amountInput(ctx.text('amount'), currency)
            return {
              ...(amount === null ? {} : { amount }),
              ...(reRated ? { currency } : {}),
            }
          },
          run: (body, unit) => run(ctx, unit, id, body),
        })
        if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
        const to =
          outcome.object.object === 'transaction'
            ? `/console/transactions/${outcome.object.id}`
            : `${AUTHORIZATIONS}/${id}`
        return ctx.redirect(to, { kind: 'ok', text: doneText(outcome, done(outcome.object)) })
      })
    }
    simulate(
      'capture',
      CaptureRequest,
      (ctx, unit, id, body) => capture(unit, apiCtx(ctx), id, body.amount, true, body.currency),
      (t: TransactionView) => `Captured ${amounts(t)}: a pending capture transaction.`,
    )
    simulate(
      'increment',
      IncrementRequest,
      (ctx, unit, id, body) => increment(unit, apiCtx(ctx), id, body.amount),
      (a: AuthorizationView) =>
        a.request_history.at(-1)?.approved
          ? `Increment approved: ${money(a.amount, a.currency)} in all.`
          : 'Increment declined.',
    )
    simulate(
      'reverse',
      ReverseRequest,
      (ctx, unit, id, body) => reverse(unit, apiCtx(ctx), id, body.amount),
      (a: AuthorizationView) => `Reversed; ${money(a.held_amount, a.currency)} still held.`,
    )
    simulate(
      'expire',
      undefined,
      (ctx, unit, id) => expire(unit, apiCtx(ctx), id),
      () => 'The authorization expired; its hold is released.',
    )
  },
}
