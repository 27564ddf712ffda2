import type { FastifyReply } from 'fastify'
import { html, type Html } from '../../../lib/html.js'
import { cardholderNames, cardholdersOnClock } from '../../cardholders/index.js'
import {
  advanceClock,
  createClock,
  deleteClock,
  listClocks,
  retrieveClock,
  SandboxClockAdvance,
  SandboxClockCreate,
  type SandboxClockView,
} from '../../clocks/index.js'
import { cursorPager, details, field, formatTime, table } from '../components.js'
import type { ConsolePage, PageContext } from '../router.js'
import { act, actionForm, apiCtx, canChange, doneText } from './changes.js'
import { pageOf, pathParam, queryText } from './form-input.js'
import { objectLink, statusBadge, when } from './object-display.js'
import { orProblem, problemBox, type Problem } from './refusals.js'
import { inSandbox, sandboxOnly } from './sandbox.js'

export const CLOCKS = '/console/sandbox/clocks'

/** How many of a clock's cardholders its page lists. */
const CARDHOLDERS_SHOWN = 100

/** A clock's time, in UTC. */
function clockTime(clock: SandboxClockView): Html {
  return formatTime(new Date(clock.frozen_time))
}

/** "name, time" (or the id when unnamed), linked to the clock's page: how an object under a clock names it. */
export function clockLabel(clock: SandboxClockView): Html {
  return html`<a href="${CLOCKS}/${clock.id}">${clock.name ?? clock.id}</a>, ${clockTime(clock)}`
}

function productionPage(ctx: PageContext): FastifyReply {
  return ctx.render({
    title: 'Sandbox clocks',
    body: html`<p>Sandbox clocks are a sandbox tool: switch to the sandbox to move time for a test's cardholders.</p>`,
  })
}

/** A `datetime-local` value read as UTC, in RFC 3339 (empty: undefined; not a time: as typed, for /v1 to refuse). */
function utcTime(text: string): string | undefined {
  if (!text) return undefined
  const withSeconds = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(text) ? `${text}:00` : text
  return /[zZ]|[+-]\d{2}:\d{2}$/.test(withSeconds) ? withSeconds : `${withSeconds}Z`
}

async function listPage(ctx: PageContext, problem?: Problem, status = 200) {
  if (!inSandbox(ctx)) return productionPage(ctx)
  const page = await orProblem(ctx, 'Sandbox clocks', () =>
    listClocks(ctx.deps, apiCtx(ctx), pageOf(ctx)),
  )
  if ('sent' in page) return page.sent
  const create = canChange(ctx)
    ? html`<section class="card" aria-labelledby="new-clock-h"><h2 id="new-clock-h">New clock</h2>
${actionForm(
  ctx,
  CLOCKS,
  'Create a sandbox clock',
  'Create clock',
  html`${field({ name: 'name', id: 'clock-name', label: 'Name', maxlength: 100, hint: 'Optional: what the test is about.' })}
<label for="clock-time">Start time (UTC)<span class="hint" id="clock-time-hint">Optional: now when left empty.</span></label>
<input id="clock-time" name="frozen_time" type="datetime-local" aria-describedby="clock-time-hint">`,
  'primary',
)}</section>`
    : html``
  return ctx.render(
    {
      title: 'Sandbox clocks',
      body: html`${problemBox(problem)}<p class="muted">A clock moves time for the cardholders created on it (<code>clock_id</code>) and everything under them: advance it to see holds expire days later, in seconds. Deleted with its objects 30 days after its creation.</p>
${table({
  caption: 'Clocks, newest first',
  rows: page.data,
  empty: 'No clock yet.',
  columns: [
    { header: 'Clock', cell: (c) => html`<a href="${CLOCKS}/${c.id}">${c.name ?? c.id}</a>` },
    { header: 'Time (UTC)', cell: (c) => clockTime(c) },
    { header: 'Status', cell: (c) => statusBadge(c.status) },
    { header: 'Created', cell: (c) => when(c.created_at) },
  ],
})}${cursorPager(CLOCKS, {}, page.next_cursor, !queryText(ctx, 'after'))}
${create}`,
    },
    status,
  )
}

async function detailPage(ctx: PageContext, id: string, problem?: Problem, status = 200) {
  if (!inSandbox(ctx)) return productionPage(ctx)
  const clock = await orProblem(ctx, 'Sandbox clock', () =>
    retrieveClock(ctx.deps, apiCtx(ctx), id),
  )
  if ('sent' in clock) return clock.sent
  const path = `${CLOCKS}/${clock.id}`
  const holderIds = await cardholdersOnClock(ctx.deps.db, clock.id, CARDHOLDERS_SHOWN)
  const names = await cardholderNames(ctx.deps.db, ctx.scope!, holderIds)
  const holders = holderIds.filter((h) => names.has(h))
  const controls = canChange(ctx)
    ? html`<section class="card" aria-labelledby="advance-h"><h2 id="advance-h">Advance</h2>
<p class="muted">Runs everything that falls due under the clock up to its new time (hold expiry, settlement, card expiry and issuance, disputes, KYC and 3-D Secure expiry, eSIM validity and top-ups), earliest first; at most 730 days a step.</p>
<div class="actions">
${actionForm(
  ctx,
  `${path}/advance`,
  'Advance by a duration',
  'Advance by duration',
  field({
    name: 'by',
    id: 'advance-by',
    label: 'Duration',
    value: 'P1D',
    required: true,
    maxlength: 64,
    hint: 'ISO 8601: P1D, PT36H, P8D, P1M.',
  }),
  'primary',
)}
${actionForm(
  ctx,
  `${path}/advance`,
  'Advance to a time',
  'Advance to time',
  html`<label for="advance-to">New time (UTC)<span class="hint" id="advance-to-hint">After the clock's time.</span></label>
<input id="advance-to" name="to" type="datetime-local" required aria-describedby="advance-to-hint">`,
)}</div></section>
<section class="card" aria-labelledby="delete-h"><h2 id="delete-h">Delete</h2>
<p class="muted">Deleting the clock deletes its cardholders and everything under them.</p>
<p><a href="${path}/delete">Delete this clock…</a></p></section>`
    : html``
  return ctx.render(
    {
      title: `Sandbox clock: ${clock.name ?? clock.id}`,
      body: html`${problemBox(problem)}${details([
        ['Clock', html`<code>${clock.id}</code>`],
        ['Name', clock.name],
        ['Time (UTC)', clockTime(clock)],
        ['Status', statusBadge(clock.status)],
        ['Deleted on its own', when(clock.deletes_after)],
        ['Created', when(clock.created_at)],
      ])}
<h2>Cardholders on this clock</h2>${table({
        caption: `Cardholders on this clock (at most ${CARDHOLDERS_SHOWN})`,
        rows: holders,
        empty:
          'No cardholder yet: create one with clock_id set to this clock (POST /v1/cardholders).',
        columns: [
          { header: 'Cardholder', cell: (h) => objectLink(h, names.get(h)) },
          { header: 'Id', cell: (h) => html`<code>${h}</code>` },
        ],
      })}
${controls}`,
    },
    status,
  )
}

/** Sandbox clocks (sandbox): the list, a clock with its cardholders; create, advance (by or to) and delete (confirmed). */
export const sandboxClockPages: ConsolePage = {
  name: 'sandbox-clocks',
  register(router) {
    router.get(CLOCKS, 'organization', (ctx) => listPage(ctx))
    router.get(`${CLOCKS}/:id`, 'organization', (ctx) => detailPage(ctx, pathParam(ctx, 'id')))

    router.post(CLOCKS, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/simulate/clocks',
        status: 201,
        schema: SandboxClockCreate,
        action: 'simulate.clock_created',
        body: () => {
          const name = ctx.text('name').trim()
          const at = utcTime(ctx.text('frozen_time'))
          return { ...(name ? { name } : {}), ...(at ? { frozen_time: at } : {}) }
        },
        run: (body, unit) => createClock(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) return listPage(ctx, outcome.problem, outcome.status)
      const clock = outcome.object as SandboxClockView
      return ctx.redirect(`${CLOCKS}/${clock.id}`, {
        kind: 'ok',
        text: doneText(outcome, 'Clock created.'),
      })
    })

    router.post(`${CLOCKS}/:id/advance`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/simulate/clocks/${id}/advance`,
        schema: SandboxClockAdvance,
        action: 'simulate.clock_advanced',
        body: () => {
          const by = ctx.text('by').trim()
          const to = utcTime(ctx.text('to').trim())
          return { ...(by ? { by } : {}), ...(to ? { to } : {}) }
        },
        run: (body, unit) => advanceClock(unit, apiCtx(ctx), id, body),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      const clock = outcome.object as SandboxClockView
      return ctx.redirect(`${CLOCKS}/${id}`, {
        kind: 'ok',
        text: doneText(outcome, `The clock is at ${clock.frozen_time}.`),
      })
    })

    // Deleting cannot be undone: the clock's page links here, and only this page's form deletes it.
    router.get(`${CLOCKS}/:id/delete`, 'organization', async (ctx) => {
      if (!inSandbox(ctx)) return productionPage(ctx)
      const id = pathParam(ctx, 'id')
      const clock = await orProblem(ctx, 'Sandbox clock', () =>
        retrieveClock(ctx.deps, apiCtx(ctx), id),
      )
      if ('sent' in clock) return clock.sent
      const back = `${CLOCKS}/${clock.id}`
      if (!canChange(ctx))
        return ctx.redirect(back, {
          kind: 'info',
          text: 'Only owners and developers can delete it.',
        })
      return ctx.render({
        title: 'Delete this sandbox clock?',
        body: html`<div class="card"><p>Delete the clock <strong>${clock.name ?? clock.id}</strong>, <code>${clock.id}</code>?</p>
<p>Its cardholders and everything under them (accounts and their ledger, cards, authorizations, transactions, disputes, 3-D Secure authentications, KYC records, eSIMs and orders) are deleted with it; the events already sent stay. <strong>This cannot be undone.</strong></p>
${actionForm(ctx, `${back}/delete`, 'Confirm deleting the clock', 'Delete clock and its objects', html``, 'danger')}
<p><a href="${back}">Cancel: keep the clock</a></p></div>`,
      })
    })

    router.post(`${CLOCKS}/:id/delete`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const outcome = await act(ctx, {
        method: 'DELETE',
        path: `/v1/simulate/clocks/${id}`,
        body: {},
        action: 'simulate.clock_deleted',
        run: (_body, unit) => deleteClock(unit, apiCtx(ctx), id),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      return ctx.redirect(CLOCKS, {
        kind: 'ok',
        text: doneText(outcome, 'The clock and its objects are deleted.'),
      })
    })
  },
}
