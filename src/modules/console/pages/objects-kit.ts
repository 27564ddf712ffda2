import { randomUUID } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import type { RequestCtx } from '../../../http/context.js'
import { envelope } from '../../../http/error-handler.js'
import { ApiError, isApiError } from '../../../http/errors.js'
import { runIdempotent } from '../../../http/idempotency.js'
import { checkBody } from '../../../http/validation.js'
import type { CardView } from '../../cards/index.js'
import { eventsAbout } from '../../events/index.js'
import { audit } from '../../users/index.js'
import { allowed } from '../access.js'
import { field, formatMoney, formatTime, minorUnits, postForm, table } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { PageContext } from '../router.js'

/**
 * What the object pages share (cardholders, accounts, cards, authorizations, transactions, disputes, and the pages
 * of network tokens, 3-D Secure and eSIM): links between objects, status badges, money, errors in words, the sandbox
 * panel, and `act`, which runs one change exactly as /v1 would with an Idempotency-Key and writes its audit row.
 *
 * - `objectHref(id)` / `objectLink(id)`: the console page of an object, by its id's prefix (`OBJECT_PAGES`).
 * - `statusBadge(status)`, `money(amount, currency)`, `amountInput(text, currency)`.
 * - `problemBox(problem)`: the /v1 error envelope's message with a link to its doc_url.
 * - `canChange(ctx)` (owner, developer), `inSandbox(ctx)`, `sandboxPanel(ctx, title, body)`.
 * - `keyField()`: the one-time idempotency key every change form carries; `act(ctx, call)`.
 * - `eventsSection(ctx, id, since)`: the object's events, each linking to its event page.
 * - `apiCtx(ctx)`: the request context the modules' use cases take, for the console's session.
 */

/** The console page of each kind of object, by id prefix. A page for another kind adds its line here. */
export const OBJECT_PAGES: Record<string, string> = {
  chd: '/console/cardholders',
  acct: '/console/accounts',
  card: '/console/cards',
  auth: '/console/authorizations',
  txn: '/console/transactions',
  dsp: '/console/disputes',
  ntok: '/console/network-tokens',
  tdsa: '/console/authentications',
  esord: '/console/esim/orders',
  esim: '/console/esims',
  rpt: '/console/reports',
  evt: '/console/developers/events',
}

/** The console page of the object `id` names, or null for an id of a kind without a page. */
export function objectHref(id: string): string | null {
  const prefix = /^([a-z]+)_[0-9A-Za-z]+$/.exec(id)?.[1]
  const base = prefix ? OBJECT_PAGES[prefix] : undefined
  return base ? `${base}/${id}` : null
}

/** An id as a link to its page (its id in code), the bare id when it has no page, or a dash for none. */
export function objectLink(id: string | null | undefined, label?: string): Html {
  if (!id) return html`<span class="muted">—</span>`
  const href = objectHref(id)
  return href ? html`<a href="${href}">${label ?? html`<code>${id}</code>`}</a>` : html`<code>${id}</code>`
}

const TONES: Record<string, 'good' | 'bad' | 'wait'> = {
  active: 'good', approved: 'good', open: 'good', settled: 'good', won: 'good', delivered: 'good', completed: 'good', succeeded: 'good',
  running: 'good', enabled: 'good', installed: 'good', released: 'good', on_sale: 'good',
  pending: 'wait', requested: 'wait', unsettled: 'wait', suspended: 'wait', queued: 'wait',
  declined: 'bad', rejected: 'bad', closed: 'bad', blocked: 'bad', lost: 'bad', expired: 'bad', frozen: 'bad', failed: 'bad', deleted: 'bad',
  depleted: 'bad', withdrawn: 'bad', disabled: 'bad',
}

/** A status as a badge (its text always says it; the colour only repeats it: good, waiting, bad or neutral). */
export function statusBadge(status: string | null | undefined): Html {
  if (!status) return html`<span class="muted">—</span>`
  return html`<span class="badge ${TONES[status] ?? 'neutral'}">${status.replace(/_/g, ' ')}</span>`
}

/** An amount in minor units, in its currency's units: `money(1250, 'USD')` is `$12.50 USD`. */
export function money(amount: number, currency: string): string {
  return `${formatMoney(amount, currency)} ${currency}`
}

/**
 * An amount typed in the currency's units ("12.50" for USD, "1250" for JPY) as minor units; null when empty. Anything
 * else is the invalid_parameter /v1 answers for a malformed amount.
 */
export function amountInput(text: string, currency: string, param = 'amount'): number | null {
  const value = text.trim().replace(/,/g, '')
  if (value === '') return null
  const digits = minorUnits(currency)
  const match = /^(\d{1,13})(?:\.(\d+))?$/.exec(value)
  if (!match || (match[2] ?? '').length > digits) {
    throw new ApiError('invalid_parameter', {
      param, message: digits === 0 ? `Write the amount in whole ${currency} (no decimals), like 1250.` : `Write the amount in ${currency} with at most ${digits} decimals, like 12.${'5'.padEnd(digits, '0')}.`,
    })
  }
  return Number(match[1]) * 10 ** digits + Number((match[2] ?? '').padEnd(digits, '0') || '0')
}

/** What a refused change answers, as /v1's error envelope says it. */
export interface Problem { code: string; message: string; doc_url: string; param?: string; errors?: { param: string; message: string }[] }

/** A refusal in words: the envelope's message (and each field's), and a link to the error's documentation. */
export function problemBox(problem: Problem | null | undefined): Html {
  if (!problem) return html``
  const fields = problem.errors?.slice(0, 5) ?? []
  return html`<div class="flash error" role="alert"><p>${problem.message}</p>${fields.length > 0 ? html`<ul>${fields.map((f) => html`<li><code>${f.param}</code>: ${f.message}</li>`)}</ul>` : ''}
<p><a href="${problem.doc_url}">About this error (<code>${problem.code}</code>)</a></p></div>`
}

/** A thrown ApiError as the Problem the page shows. */
export function problemOf(ctx: PageContext, err: ApiError): Problem {
  return envelope(err, String(ctx.req.id), ctx.deps.config.baseUrl).error as Problem
}

/** Whether the person may change the organization's objects (owners and developers; a viewer reads only). */
export function canChange(ctx: PageContext): boolean {
  return allowed(ctx.session.user.role, 'organization', 'POST')
}

export function inSandbox(ctx: PageContext): boolean {
  return ctx.scope?.environment === 'sandbox'
}

/** The sandbox tools of an object, shown only in the sandbox and only to those who may change things. */
export function sandboxPanel(ctx: PageContext, title: string, body: Html): Html {
  if (!inSandbox(ctx) || !canChange(ctx)) return html``
  const id = `sbx-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`
  return html`<section class="card sandbox" aria-labelledby="${id}"><h2 id="${id}">${title} <span class="badge neutral">Sandbox</span></h2>${body}</section>`
}

/** The hidden one-time key of a change form: sent twice (a double click, a resubmitted page), it has one effect. */
export function keyField(): Html {
  return html`<input type="hidden" name="idempotency_key" value="${randomUUID()}">`
}

/** The request context the modules' use cases take, for this console request (its scope, a client id naming the person). */
export function apiCtx(ctx: PageContext): RequestCtx {
  return { ...ctx.scope!, requestId: String(ctx.req.id), clientId: `console:${ctx.session.user.id}`, scopes: new Set() }
}

/** One change: the /v1 call it stands for, the use case that performs it, and what the audit log calls it. */
export interface Change<T> {
  /** The /v1 method and path it stands for: the key is stored under them, as an API call's would be. */
  method: 'POST' | 'PATCH'
  path: string
  /** The JSON body /v1 would take; checked against `schema` (the route's) exactly as /v1 checks it. */
  body: Record<string, unknown> | (() => Record<string, unknown>)
  schema?: object
  /** Runs the use case with the checked body; `status` is what /v1 answers (201 for a creation). */
  run: (body: any) => Promise<T>
  status?: number
  /** The audit action, and the id it records (default: the answer's id). */
  action: string
  auditId?: (result: T) => string | null
}

export type Outcome<T> = { ok: true; object: T; replay: boolean } | { ok: false; problem: Problem; status: number }

/**
 * Performs a change from a console form: under the form's one-time key (`idempotency_key`), with the guarantee of
 * /v1's Idempotency-Key (`runIdempotent`), the route's body schema, and an audit row in the change's transaction
 * (none for a refusal or a replay). A form without a key gets a fresh one (the change then is not deduplicated).
 */
export async function act<T>(ctx: PageContext, change: Change<T>): Promise<Outcome<T>> {
  // A double click sends the second form while the first runs: it waits for the first's answer (a few seconds at
  // most) instead of showing "in progress", so both land on the same result.
  for (let attempt = 0; ; attempt++) {
    const outcome = await actOnce(ctx, change)
    if (outcome.ok || outcome.problem.code !== 'idempotency_request_in_progress' || attempt >= IN_PROGRESS_RETRIES) return outcome
    await new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_WAIT_MS))
  }
}

const IN_PROGRESS_RETRIES = 20
const IN_PROGRESS_WAIT_MS = 150

async function actOnce<T>(ctx: PageContext, change: Change<T>): Promise<Outcome<T>> {
  const scope = ctx.scope!
  const key = ctx.text('idempotency_key') || randomUUID()
  try {
    const sent = typeof change.body === 'function' ? change.body() : change.body
    const outcome = await runIdempotent(ctx.deps, {
      organizationId: scope.organizationId, environment: scope.environment, key: `console:${key}`, method: change.method, path: change.path,
      body: sent, requestId: String(ctx.req.id),
    }, async () => {
      const body = change.schema ? checkBody(change.schema, structuredClone(sent)) : sent
      return { status: change.status ?? 200, body: await change.run(body) }
    }, async (result) => {
      const objectId = change.auditId ? change.auditId(result as T) : (result as { id?: string }).id ?? null
      // In the change's transaction when it has one; after a batched statement that committed on its own, alone.
      await audit(ctx.deps.db, { ...ctx.actor(), organizationId: scope.organizationId }, change.action, objectId, ctx.visitor.address)
    })
    const parsed = JSON.parse(outcome.body) as T & { error?: Problem }
    if (outcome.status >= 400) return { ok: false, problem: parsed.error!, status: outcome.status }
    return { ok: true, object: parsed, replay: outcome.replay }
  } catch (err) {
    if (isApiError(err) && err.status < 500) return { ok: false, problem: problemOf(ctx, err), status: err.status }
    throw err
  }
}

/** The flash text after a change: what happened, or that the form had been sent already. */
export function doneText(outcome: { replay: boolean }, text: string): string {
  return outcome.replay ? `This form was already sent: nothing changed again. ${text}` : text
}

/** An object page that could not be read (not found, another environment's object): its error as a page. */
export function notFoundPage(ctx: PageContext, title: string, err: unknown): FastifyReply {
  if (!isApiError(err) || err.status >= 500) throw err
  return ctx.render({ title, body: html`${problemBox(problemOf(ctx, err))}<p><a href="/console">Back to the console</a></p>`, flash: null }, err.status)
}

/** Reads a page's data; an ApiError (a bad cursor, an unknown id) becomes its page, anything else is rethrown. */
export async function orProblem<T>(ctx: PageContext, title: string, read: () => Promise<T>): Promise<T | FastifyReply> {
  try {
    return await read()
  } catch (err) {
    return notFoundPage(ctx, title, err)
  }
}

/** The object's events (newest first, at most 20), each linking to its event page. */
export async function eventsSection(ctx: PageContext, objectId: string, since: string | Date): Promise<Html> {
  const from = new Date(new Date(since).getTime() - 1000)
  const rows = await eventsAbout(ctx.deps.db, ctx.scope!, objectId, from)
  return html`<section aria-labelledby="events-h"><h2 id="events-h">Events</h2>${table({
    caption: 'Events about this object, newest first',
    rows,
    empty: 'No events yet.',
    columns: [
      { header: 'Type', cell: (e) => html`<code>${e.type}</code>` },
      { header: 'Event', cell: (e) => html`<a href="/console/developers/events/${e.id}"><code>${e.id}</code></a>` },
      { header: 'At', cell: (e) => formatTime(new Date(e.created_at)) },
    ],
  })}</section>`
}

/** A `<time>` of an ISO string, or a dash. */
export function when(iso: string | null | undefined): Html {
  return iso ? formatTime(new Date(iso)) : html`<span class="muted">—</span>`
}

/** One query parameter as text ('' when absent). */
export function queryText(ctx: PageContext, name: string): string {
  const value = (ctx.req.query as Record<string, unknown>)[name]
  return typeof value === 'string' ? value.slice(0, 512) : ''
}

/** One path parameter. */
export function pathParam(ctx: PageContext, name: string): string {
  return (ctx.req.params as Record<string, string>)[name] ?? ''
}

/** The page parameters of a console list: 25 a page, `?after=` the API's next_cursor. */
export function pageOf(ctx: PageContext): { limit: number; starting_after?: string } {
  const after = queryText(ctx, 'after')
  return after ? { limit: 25, starting_after: after } : { limit: 25 }
}

/** A form's optional text field: undefined when empty (so the body leaves it out, as an API caller would). */
export function optional(ctx: PageContext, name: string): string | undefined {
  const value = ctx.text(name).trim()
  return value === '' ? undefined : value
}

/**
 * A change form: the CSRF field, the one-time key, `body` (its fields) and one button. `label` names the form for
 * assistive technology; `tone` styles the button (danger for what cannot be undone).
 */
export function actionForm(ctx: PageContext, action: string, label: string, button: string, body: Html = html``, tone: 'primary' | 'secondary' | 'danger' = 'secondary'): Html {
  return postForm(action, ctx.csrf, html`${keyField()}${body}<div><button type="submit" class="${tone}">${button}</button></div>`, { label })
}

/** An amount field in the currency's units ("12.50 USD"); `id` keeps two such fields of one page apart. */
export function moneyField(name: string, id: string, label: string, currency: string, options: { value?: string; required?: boolean; hint?: string } = {}): Html {
  const digits = minorUnits(currency)
  return field({
    name, id, label: `${label} (${currency})`, value: options.value, required: options.required, inputmode: digits === 0 ? 'numeric' : 'decimal',
    hint: options.hint ?? (digits === 0 ? `Whole ${currency}, like 1250.` : `In ${currency}, like 12.${'5'.padEnd(digits, '0')}.`),
  })
}

/** A sandbox-only POST reached in production: the same 404 an unknown address answers (as /v1's simulator routes do). */
export function sandboxOnly(ctx: PageContext): FastifyReply | null {
  if (inSandbox(ctx)) return null
  return ctx.render({ title: 'Page not found', body: html`<p>The sandbox tools exist only in the sandbox environment.</p><p><a href="/console">Back to the console</a></p>`, flash: null }, 404)
}

/** A table of cards (masked: brand and last four), linking each; `withAccount` adds the account each spends from. */
export function cardsTable(caption: string, cards: readonly CardView[], withAccount = false): Html {
  return table({
    caption,
    rows: cards,
    empty: 'No card yet.',
    columns: [
      { header: 'Card', cell: (k) => objectLink(k.id, k.last4 ? `${k.brand} •••• ${k.last4}` : `${k.brand} (not issued yet)`) },
      { header: 'Form', cell: (k) => k.form_factor },
      { header: 'Status', cell: (k) => statusBadge(k.status) },
      ...(withAccount ? [{ header: 'Account', cell: (k: CardView) => objectLink(k.account_id) }] : []),
    ],
  })
}
