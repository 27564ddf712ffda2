import type { FastifyReply } from 'fastify'
import { html, type Html } from '../../../lib/html.js'
import {
  AuthorizationRuleBacktestCreate,
  AuthorizationRuleCreate,
  AuthorizationRuleUpdate,
  createBacktest,
  createRule,
  deleteRule,
  listRules,
  RULE_MODES,
  RULE_TYPES,
  type RuleType,
  retrieveRule,
  SCOPE_LEVELS,
  updateRule,
  type AuthorizationRuleView,
} from '../../authorization-rules/index.js'
import {
  listRuleDecisions,
  RULE_DECISIONS_SCAN,
  type AuthorizationView,
} from '../../authorizations/index.js'
import { cardLabels, maskedCard, type CardLabel } from '../../cards/index.js'
import {
  cursorPager,
  details,
  field,
  getForm,
  selectField,
  table,
  withQuery,
} from '../components.js'
import type { ConsolePage, PageContext } from '../router.js'
import { act, actionForm, apiCtx, canChange, doneText, type Outcome } from './changes.js'
import { filterValue, pageOf, pathParam, queryText } from './form-input.js'
import { amounts, apiView, eventsSection, objectLink, statusBadge, when } from './object-display.js'
import { orProblem, problemBox, type Problem } from './refusals.js'
import { backtestBody, backtestsSection } from './rule-backtests.js'
import {
  fieldsOf,
  listOf,
  parametersFields,
  parametersFrom,
  parametersInWords,
  ruleSummary,
  scopeInWords,
  TYPE_HINTS,
  TYPE_LABELS,
  type Values,
} from './rule-forms.js'

export const RULES = '/console/authorization-rules'

const MODE_HINT =
  'Shadow never declines: it records would_decline where it would have, so you can watch a rule before it acts.'

/** Values from the form as sent, or from a record when the page is drawn the first time. */
function valuesOf(record: Record<string, string>): Values {
  return (name) => record[name] ?? ''
}

// ---------------------------------------------------------------------------------------------------------
// The list

async function listPage(ctx: PageContext): Promise<FastifyReply> {
  const filters = { card_id: filterValue(ctx, 'card_id', 'id') }
  const page = await orProblem(ctx, 'Authorization rules', () =>
    listRules(ctx.deps, apiCtx(ctx), { card_id: filters.card_id || undefined, ...pageOf(ctx) }),
  )
  if ('sent' in page) return page.sent
  const create = canChange(ctx) ? html`<p><a href="${RULES}/new">Create a rule</a></p>` : html``
  return ctx.render({
    title: 'Authorization rules',
    body: html`<p class="muted">Velocity limits, conditions and merchant locks on programs, accounts, cardholders or cards. They run in every authorization decision after the card's own spending controls, and only ever decline.</p>
${create}
${getForm(RULES, html`<div>${field({ name: 'card_id', label: 'Rules that apply to the card', value: filters.card_id, hint: 'card_…' })}</div><div><button type="submit" class="secondary">Filter</button></div>`, 'Filter rules')}
${table({
  caption: 'Authorization rules, newest first',
  rows: page.data,
  empty: filters.card_id ? 'No rule applies to this card.' : 'No rule yet.',
  columns: [
    { header: 'Name', cell: (r) => html`<a href="${RULES}/${r.id}">${r.name}</a>` },
    { header: 'Scope', cell: (r) => scopeInWords(r.scope, true) },
    { header: 'Type', cell: (r) => TYPE_LABELS[r.type] },
    { header: 'Mode', cell: (r) => statusBadge(r.mode) },
    { header: 'Status', cell: (r) => statusBadge(r.status) },
    { header: 'Created', cell: (r) => when(r.created_at) },
  ],
})}${cursorPager(RULES, filters, page.next_cursor, !queryText(ctx, 'after'))}`,
  })
}

// ---------------------------------------------------------------------------------------------------------
// Creating a rule

function typeOf(text: string): RuleType {
  return (RULE_TYPES as readonly string[]).includes(text) ? (text as RuleType) : 'velocity_limit'
}

/** The form of a new rule of `type`, filled with `values` (the query's scope, or what was typed). */
function newPage(
  ctx: PageContext,
  type: RuleType,
  values: Values,
  problem?: Problem,
  status = 200,
): FastifyReply {
  if (!canChange(ctx))
    return ctx.redirect(RULES, {
      kind: 'info',
      text: 'Viewers read rules; they do not create them.',
    })
  const choices = RULE_TYPES.map((t) => {
    const href = withQuery(`${RULES}/new`, { type: t, level: values('level'), ids: values('ids') })
    const current = t === type ? html` aria-current="page"` : ''
    return html`<li><a href="${href}"${current}>${TYPE_LABELS[t]}</a>: ${TYPE_HINTS[t]}</li>`
  })
  return ctx.render(
    {
      title: `New rule: ${TYPE_LABELS[type].toLowerCase()}`,
      body: html`${problemBox(problem)}<nav aria-label="Rule type"><ul>${choices}</ul></nav>
<section class="card" aria-labelledby="new-h"><h2 id="new-h">${TYPE_LABELS[type]}</h2>
${actionForm(
  ctx,
  RULES,
  'Create the rule',
  'Create rule',
  html`<input type="hidden" name="type" value="${type}">
${field({ name: 'name', id: 'new-name', label: 'Name', value: values('name'), required: true, maxlength: 100, hint: 'Yours, to recognise it: "At most 2 purchases a day".' })}
<div class="grid2"><div>${selectField(
    'level',
    'Applies to',
    SCOPE_LEVELS.map((l): [string, string] => [l, `${l}s`]),
    values('level') || 'card',
    { id: 'new-level' },
  )}</div>
<div>${field({ name: 'ids', id: 'new-ids', label: 'Their ids', value: values('ids'), required: true, hint: 'prog_, acct_, chd_ or card_ ids of that level, separated by commas.' })}</div>
<div>${field({ name: 'exclude_ids', id: 'new-exclude', label: 'Except (optional)', value: values('exclude_ids'), hint: 'Cards, accounts or cardholders under them to skip.' })}</div>
<div>${selectField(
    'mode',
    'Mode',
    RULE_MODES.map((m): [string, string] => [m, m]),
    values('mode') || 'shadow',
    { id: 'new-mode', hint: MODE_HINT },
  )}</div></div>
${parametersFields(type, values, 'new')}`,
  'primary',
)}</section>`,
    },
    status,
  )
}

// ---------------------------------------------------------------------------------------------------------
// One rule

interface Shown {
  problem?: Problem
  status?: number
  /** The edit form as it was typed (after a refusal); the rule's own values otherwise. */
  typed?: Values
  /** The backtest form as it was typed (after a refusal). */
  backtest?: Values
}

function decisionsTable(
  rows: AuthorizationView[],
  ruleId: string,
  cards: ReadonlyMap<string, CardLabel>,
): Html {
  return table({
    caption: 'Latest authorizations this rule declined or would have declined',
    rows,
    empty: 'None yet: this rule has declined nothing, and would have declined nothing.',
    columns: [
      { header: 'Authorization', cell: (a) => objectLink(a.id, a.merchant.name) },
      {
        header: 'Outcome',
        cell: (a) => statusBadge(a.rule_results.find((r) => r.rule_id === ruleId)?.outcome),
      },
      { header: 'Amount', numeric: true, cell: (a) => amounts(a) },
      {
        header: 'Card',
        cell: (a) => {
          const card = cards.get(a.card_id)
          return objectLink(a.card_id, card?.last4 ? maskedCard(card) : undefined)
        },
      },
      { header: 'At', cell: (a) => when(a.created_at) },
    ],
  })
}

function manageSections(ctx: PageContext, r: AuthorizationRuleView, typed?: Values): Html {
  if (!canChange(ctx)) return html``
  const path = `${RULES}/${r.id}`
  const values = typed ?? valuesOf({ name: r.name, mode: r.mode, ...fieldsOf(r) })
  const next = r.status === 'enabled' ? 'disabled' : 'enabled'
  return html`<div class="actions">${actionForm(
    ctx,
    `${path}/status`,
    r.status === 'enabled' ? 'Disable the rule' : 'Enable the rule',
    r.status === 'enabled' ? 'Disable' : 'Enable',
    html`<input type="hidden" name="status" value="${next}">`,
    r.status === 'enabled' ? 'secondary' : 'primary',
  )}</div>
<p><a href="${path}/delete">Delete this rule…</a></p>
<section class="card" aria-labelledby="edit-h"><h2 id="edit-h">Edit the rule</h2>
<p class="muted">The scope and the type are fixed once created: make another rule to change them. A new window, aggregate or filters start counting again; a new limit keeps what was counted.</p>
${actionForm(
  ctx,
  path,
  'Edit the rule',
  'Save changes',
  html`${field({ name: 'name', id: 'edit-name', label: 'Name', value: values('name'), required: true, maxlength: 100 })}
${selectField(
  'mode',
  'Mode',
  RULE_MODES.map((m): [string, string] => [m, m]),
  values('mode'),
  { id: 'edit-mode', hint: MODE_HINT },
)}
${parametersFields(r.type, values, 'edit')}`,
  'primary',
)}</section>`
}

async function detailPage(ctx: PageContext, id: string, shown: Shown = {}): Promise<FastifyReply> {
  const api = apiCtx(ctx)
  const read = await orProblem(ctx, 'Authorization rule', async () => {
    const rule = await retrieveRule(ctx.deps, api, id)
    const decisions = await listRuleDecisions(ctx.deps, api, rule)
    const cards = await cardLabels(
      ctx.deps.db,
      api,
      decisions.map((a) => a.card_id),
    )
    return { rule, decisions, cards }
  })
  if ('sent' in read) return read.sent
  const { rule: r, decisions, cards } = read
  return ctx.render(
    {
      title: r.name,
      body: html`${problemBox(shown.problem)}${details([
        ['Rule', html`<code>${r.id}</code>`],
        ['Type', TYPE_LABELS[r.type]],
        ['What it does', ruleSummary(r)],
        ['Applies to', scopeInWords(r.scope)],
        [
          'Mode',
          html`${statusBadge(r.mode)}${r.mode === 'shadow' ? html` <span class="muted">records would_decline, never declines</span>` : ''}`,
        ],
        ['Status', statusBadge(r.status)],
        ['Created', when(r.created_at)],
        ['Updated', when(r.updated_at)],
      ])}
<section aria-labelledby="parameters-h"><h2 id="parameters-h">Parameters</h2>${parametersInWords(r)}</section>
${manageSections(ctx, r, shown.typed)}
<section aria-labelledby="decisions-h"><h2 id="decisions-h">Recent decisions</h2>
<p class="muted">What this rule said in the organization's ${RULE_DECISIONS_SCAN.toLocaleString('en-US')} latest authorizations of this environment: <strong>declined</strong> (active) or <strong>would decline</strong> (shadow), newest first. Every decision's <code>rule_results</code> is on its authorization.</p>
${decisionsTable(decisions, r.id, cards)}</section>
${await backtestsSection(ctx, r, shown.backtest)}
${await eventsSection(ctx, r.id, r.created_at)}
${apiView(r)}`,
    },
    shown.status ?? 200,
  )
}

/** Answers a rule change: its page with the flash, or the page again with the refusal. */
function after(
  ctx: PageContext,
  id: string,
  outcome: Outcome<unknown>,
  text: string,
  typed?: Values,
): Promise<FastifyReply> | FastifyReply {
  if (!outcome.ok)
    return detailPage(ctx, id, { problem: outcome.problem, status: outcome.status, typed })
  return ctx.redirect(`${RULES}/${id}`, { kind: 'ok', text: doneText(outcome, text) })
}

/** The card page's section: the rules that apply to the card (enabled or not), and a link to add one. */
export async function cardRulesSection(ctx: PageContext, cardId: string): Promise<Html> {
  const rules = await listRules(ctx.deps, apiCtx(ctx), { card_id: cardId, limit: 25 })
  const add = canChange(ctx)
    ? html`<p><a href="${RULES}/new?level=card&amp;ids=${cardId}">Add a rule for this card</a></p>`
    : ''
  return html`<section aria-labelledby="rules-h"><h2 id="rules-h">Authorization rules</h2>${table({
    caption: 'Rules that apply to this card',
    rows: rules.data,
    empty: 'No rule applies to this card.',
    columns: [
      { header: 'Name', cell: (r) => html`<a href="${RULES}/${r.id}">${r.name}</a>` },
      { header: 'What it does', cell: (r) => ruleSummary(r) },
      { header: 'Mode', cell: (r) => statusBadge(r.mode) },
      { header: 'Status', cell: (r) => statusBadge(r.status) },
    ],
  })}${add}</section>`
}

/** Authorization rules: the list, a new rule of each type, one rule (edit, enable, disable, delete) and its decisions. */
export const authorizationRulePages: ConsolePage = {
  name: 'authorization-rules',
  register(router) {
    router.get(RULES, 'organization', (ctx) => listPage(ctx))

    router.get(`${RULES}/new`, 'organization', (ctx) =>
      newPage(
        ctx,
        typeOf(queryText(ctx, 'type')),
        valuesOf({ level: filterValue(ctx, 'level', SCOPE_LEVELS), ids: queryText(ctx, 'ids') }),
      ),
    )

    router.post(RULES, 'organization', async (ctx) => {
      const type = typeOf(ctx.text('type'))
      const excluded = listOf(ctx.text('exclude_ids'))
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/authorization_rules',
        status: 201,
        schema: AuthorizationRuleCreate,
        action: 'authorization_rule.created',
        body: () => ({
          name: ctx.text('name').trim(),
          scope: {
            level: ctx.text('level'),
            ids: listOf(ctx.text('ids')),
            ...(excluded.length ? { exclude_ids: excluded } : {}),
          },
          type,
          parameters: parametersFrom(type, ctx.text),
          mode: ctx.text('mode'),
        }),
        run: (body, unit) => createRule(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) return newPage(ctx, type, ctx.text, outcome.problem, outcome.status)
      const rule = outcome.object as AuthorizationRuleView
      return ctx.redirect(`${RULES}/${rule.id}`, {
        kind: 'ok',
        text: doneText(outcome, `Rule created (${rule.mode}).`),
      })
    })

    router.get(`${RULES}/:id`, 'organization', (ctx) => detailPage(ctx, pathParam(ctx, 'id')))

    router.post(`${RULES}/:id`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const rule = await orProblem(ctx, 'Authorization rule', () =>
        retrieveRule(ctx.deps, apiCtx(ctx), id),
      )
      if ('sent' in rule) return rule.sent
      const outcome = await act(ctx, {
        method: 'PATCH',
        path: `/v1/authorization_rules/${id}`,
        schema: AuthorizationRuleUpdate,
        action: 'authorization_rule.updated',
        body: () => ({
          name: ctx.text('name').trim(),
          mode: ctx.text('mode'),
          parameters: parametersFrom(rule.type, ctx.text),
        }),
        run: (body, unit) => updateRule(unit, apiCtx(ctx), id, body),
      })
      return after(ctx, id, outcome, 'Rule saved.', ctx.text)
    })

    router.post(`${RULES}/:id/status`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const status = ctx.text('status')
      const outcome = await act(ctx, {
        method: 'PATCH',
        path: `/v1/authorization_rules/${id}`,
        schema: AuthorizationRuleUpdate,
        action:
          status === 'disabled' ? 'authorization_rule.disabled' : 'authorization_rule.enabled',
        body: { status },
        run: (body, unit) => updateRule(unit, apiCtx(ctx), id, body),
      })
      return after(ctx, id, outcome, status === 'disabled' ? 'Rule disabled.' : 'Rule enabled.')
    })

    router.post(`${RULES}/:id/backtests`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/authorization_rules/${id}/backtests`,
        status: 202,
        schema: AuthorizationRuleBacktestCreate,
        action: 'authorization_rule.backtest_requested',
        body: () => backtestBody(ctx.text),
        run: (body, unit) => createBacktest(unit, apiCtx(ctx), id, body),
      })
      if (!outcome.ok)
        return detailPage(ctx, id, {
          problem: outcome.problem,
          status: outcome.status,
          backtest: ctx.text,
        })
      return ctx.redirect(`${RULES}/${id}`, {
        kind: 'ok',
        text: doneText(outcome, 'Backtest queued: its results appear below once it has run.'),
      })
    })

    // Deleting cannot be undone: the rule page links here, and only this page's form deletes it.
    router.get(`${RULES}/:id/delete`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const rule = await orProblem(ctx, 'Authorization rule', () =>
        retrieveRule(ctx.deps, apiCtx(ctx), id),
      )
      if ('sent' in rule) return rule.sent
      const back = `${RULES}/${rule.id}`
      if (!canChange(ctx))
        return ctx.redirect(back, {
          kind: 'info',
          text: 'Viewers read rules; they do not delete them.',
        })
      return ctx.render({
        title: `Delete rule “${rule.name}”?`,
        body: html`<div class="card"><p>Delete the ${TYPE_LABELS[rule.type].toLowerCase()} <strong>${rule.name}</strong> (<code>${rule.id}</code>), ${rule.mode}, on ${scopeInWords(rule.scope)}?</p>
<p>It stops applying to the next authorization, and is no longer listed. What it said in past decisions stays on their authorizations. <strong>This cannot be undone</strong>: to pause a rule instead, disable it.</p>
${actionForm(ctx, `${back}/delete`, 'Confirm deleting the rule', 'Delete rule', html``, 'danger')}
<p><a href="${back}">Cancel: keep the rule</a></p></div>`,
      })
    })

    router.post(`${RULES}/:id/delete`, 'organization', async (ctx) => {
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'DELETE',
        path: `/v1/authorization_rules/${id}`,
        body: {},
        action: 'authorization_rule.deleted',
        run: (_body, unit) => deleteRule(unit, apiCtx(ctx), id),
      })
      if (!outcome.ok)
        return detailPage(ctx, id, { problem: outcome.problem, status: outcome.status })
      return ctx.redirect(RULES, { kind: 'ok', text: doneText(outcome, 'Rule deleted.') })
    })
  },
}
