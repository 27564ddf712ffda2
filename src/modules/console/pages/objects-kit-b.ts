import { randomUUID } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import { withTx } from '../../../db/tx.js'
import type { RequestCtx, Scope } from '../../../http/context.js'
import { ApiError, isApiError } from '../../../http/errors.js'
import { runIdempotently } from '../../../http/idempotency.js'
import { canonicalJson } from '../../../lib/canonical-json.js'
import { sha256Hex } from '../../../lib/crypto.js'
import { eventsAbout, presentEvent } from '../../events/index.js'
import { audit } from '../../users/index.js'
import { formatTime, minorUnits, table, type Flash } from '../components.js'
import { html, type Html } from '../html.js'
import type { PageContext } from '../router.js'

/**
 * What the object pages of network tokens, 3-D Secure, eSIM, reports and search share (half B of the console's
 * object pages; to be folded with `objects-kit.ts`): status badges, links from an id to its page, refusals in
 * words with their documentation link, the sandbox panel, the events of an object, and `consoleAction`, which runs a
 * form's change through the API's idempotency machinery with its audit row in the same transaction.
 */

/** The scope of an organization page (the router gives one to every `organization` route). */
export function scopeOf(ctx: PageContext): Scope {
  if (!ctx.scope) throw new ApiError('not_found')
  return ctx.scope
}

/** The request context the services take, for the console's session: the organization and the selected environment. */
export function consoleCtx(ctx: PageContext): RequestCtx {
  const scope = scopeOf(ctx)
  return { organizationId: scope.organizationId, environment: scope.environment, requestId: String(ctx.req.id), clientId: 'console', scopes: new Set() }
}

/** Whether the person may change things here (owners and developers; viewers read). */
export function canChange(ctx: PageContext): boolean {
  return ctx.session.user.role === 'owner' || ctx.session.user.role === 'developer'
}

/** Whether the sandbox tools show: the sandbox environment, and someone who may change things. */
export function sandboxTools(ctx: PageContext): boolean {
  return ctx.scope?.environment === 'sandbox' && canChange(ctx)
}

/** A sandbox tool's POST in production: refused like the API's simulator routes (which do not exist there). */
export function refuseOutsideSandbox(ctx: PageContext): void {
  if (ctx.scope?.environment !== 'sandbox') throw new ApiError('not_found', { message: 'Sandbox tools exist only in the sandbox environment.' })
}

const TONES: Record<string, 'good' | 'bad' | 'wait' | 'neutral'> = {
  active: 'good', approved: 'good', completed: 'good', succeeded: 'good', running: 'good', enabled: 'good', installed: 'good', released: 'good', on_sale: 'good',
  pending: 'wait', requested: 'wait', unsettled: 'wait', suspended: 'wait', queued: 'wait', frozen: 'wait',
  declined: 'bad', failed: 'bad', deleted: 'bad', expired: 'bad', depleted: 'bad', withdrawn: 'bad', disabled: 'bad',
}

/** A status as a labelled badge: the word itself (never colour alone), toned for good, waiting, bad or neutral. */
export function statusBadge(status: string): Html {
  return html`<span class="badge ${TONES[status] ?? 'neutral'}">${status.replace(/_/g, ' ')}</span>`
}

/** The console page of each kind of object, by id prefix; pages of half A and the Developers pages are linked by the same rule. */
const PAGE_OF: Record<string, string> = {
  chd: '/console/cardholders', acct: '/console/accounts', card: '/console/cards', auth: '/console/authorizations', txn: '/console/transactions',
  dsp: '/console/disputes', ntok: '/console/network-tokens', tdsa: '/console/authentications', esord: '/console/esim/orders', esim: '/console/esims',
  rpt: '/console/reports', evt: '/console/developers/events',
}

/** The console page of an object by its id's prefix, or null when no page shows that kind. */
export function objectHref(id: string): string | null {
  const prefix = /^([a-z]+)_[0-9A-Za-z]+$/.exec(id)?.[1]
  const base = prefix ? PAGE_OF[prefix] : undefined
  return base ? `${base}/${id}` : null
}

/** An id as a link to its page (in code type), or just the id when no page shows it; nothing for null. */
export function idLink(id: string | null | undefined): Html {
  if (!id) return html`<span class="muted">none</span>`
  const href = objectHref(id)
  return href ? html`<a href="${href}"><code>${id}</code></a>` : html`<code>${id}</code>`
}

/** The documentation of an error code, as the API's envelope links it (`doc_url`). */
export function docUrl(ctx: PageContext, code: string): string {
  return `${ctx.deps.config.baseUrl}/docs/errors#${code}`
}

/** A refusal in words: the envelope's message (and its field errors), with a link to the code's documentation. */
export function errorInWords(ctx: PageContext, err: ApiError): Html {
  const fields = err.errors?.slice(0, 5).map((e) => `${e.param}: ${e.message}`) ?? []
  return html`<div class="flash error" role="alert"><p>${err.message}${fields.length > 0 ? ` ${fields.join('; ')}.` : ''}</p>
<p><a href="${docUrl(ctx, err.code)}">About <code>${err.code}</code></a></p></div>`
}

/** A sandbox tool's frame: shown only in the sandbox and to people who may change things (the POST checks again). */
export function sandboxPanel(ctx: PageContext, id: string, title: string, body: Html): Html {
  if (!sandboxTools(ctx)) return html``
  return html`<section class="card sandbox" aria-labelledby="${id}"><h2 id="${id}">${title} <span class="badge wait">sandbox</span></h2>${body}</section>`
}

/** The hidden one-time key of a form that changes something: sent twice (a double click, a resent form), it has one effect. */
export function idempotencyField(): Html {
  return html`<input type="hidden" name="idempotency_key" value="console_${randomUUID()}">`
}

/** The latest events about an object (created at `createdAt`: none is older), each linking to its page: what a change on this page caused. */
export async function objectEvents(ctx: PageContext, objectId: string, createdAt: string): Promise<Html> {
  const rows = await eventsAbout(ctx.deps.db, scopeOf(ctx), objectId, new Date(createdAt), 20)
  return html`<h2 id="events-h">Events</h2>${table({
    caption: 'Latest events about this object, newest first',
    rows: rows.map(presentEvent),
    empty: 'No event about this object yet.',
    columns: [
      { header: 'Event', cell: (e) => idLink(e.id) },
      { header: 'Type', cell: (e) => html`<code>${e.type}</code>` },
      { header: 'Created', cell: (e) => formatTime(new Date(e.created_at)) },
    ],
  })}`
}

/** Where a change leads once it is done: the page of its result, with the message to show there. */
export interface ActionResult { to: string; text: string; objectId: string | null }

/**
 * Runs one form's change as the API runs a request with an Idempotency-Key (`runIdempotently`): the form's hidden
 * `idempotency_key` names it, the change and its audit row (`action`, in the same request transaction) commit together
 * with the stored answer, and the same form sent again is answered from that answer (one effect; the page of the
 * result is shown again). A refusal of the service (an API error) goes to `refused`, which re-renders the form with
 * the error in words; nothing of it is stored, so the corrected form may be sent with the same key.
 */
export async function consoleAction(
  ctx: PageContext, action: string, change: () => Promise<ActionResult>, refused: (err: ApiError) => Promise<FastifyReply> | FastifyReply,
): Promise<FastifyReply> {
  const scope = scopeOf(ctx)
  const fields = Object.fromEntries(Object.entries(ctx.form).filter(([k]) => k !== '_csrf' && k !== 'idempotency_key'))
  const key = ctx.text('idempotency_key') || `console_${randomUUID()}`
  const actor = ctx.actor()
  try {
    const outcome = await runIdempotently(ctx.deps, {
      organizationId: scope.organizationId, environment: scope.environment, key, method: 'POST',
      path: ctx.req.url.split('?')[0], requestHash: sha256Hex(canonicalJson({ console: fields })),
    }, async () => {
      const result = await change()
      await withTx(ctx.deps.db, (trx) => audit(trx, actor, action, result.objectId, ctx.visitor.address))
      return JSON.stringify(result)
    })
    const result = JSON.parse(outcome.body) as ActionResult
    const flash: Flash = outcome.replayed
      ? { kind: 'info', text: 'This form had already been sent: it took effect once. Here is its result.' }
      : { kind: 'ok', text: result.text }
    return ctx.redirect(result.to, flash)
  } catch (err) {
    if (isApiError(err)) return refused(err)
    throw err
  }
}

/** A form's whole-number field ('' → undefined; anything else not a whole number → NaN, which the caller refuses). */
export function wholeNumber(value: string): number | undefined {
  const v = value.trim().replace(/[,_\s]/g, '')
  if (v === '') return undefined
  return /^\d{1,15}$/.test(v) ? Number(v) : Number.NaN
}

/** A JSON view of an object (what the API answers for it), for the "as the API shows it" section. */
export function apiView(value: unknown): Html {
  return html`<details><summary>As the API shows it</summary><pre class="json">${JSON.stringify(value, null, 2)}</pre></details>`
}

/** Objects a list page shows at a time. */
export const PAGE_SIZE = 25

/** The cursor page a list shows: `?after=` is the API's `next_cursor` of the previous page. */
export function pageOf(ctx: PageContext): { after: string; page: { limit: number; starting_after?: string } } {
  const value = (ctx.req.query as Record<string, unknown>).after
  const after = typeof value === 'string' ? value.slice(0, 512) : ''
  return { after, page: { limit: PAGE_SIZE, ...(after ? { starting_after: after } : {}) } }
}

/** A filter of a list: the query value when it is one of `allowed` (or any id-like text when `allowed` is 'id'). */
export function filterValue(ctx: PageContext, name: string, allowed: readonly string[] | 'id'): string {
  const raw = (ctx.req.query as Record<string, unknown>)[name]
  const value = typeof raw === 'string' ? raw.trim().slice(0, 128) : ''
  if (allowed === 'id') return /^[a-z]+_[0-9A-Za-z]+$/.test(value) ? value : ''
  return allowed.includes(value) ? value : ''
}

/**
 * An amount typed in the currency's major unit ("12.50" USD, "1250" JPY) as the integer of minor units the API takes;
 * NaN when it is not a positive amount with at most the currency's decimals.
 */
export function minorAmount(text: string, currency: string): number {
  const digits = minorUnits(currency)
  const match = /^(\d{1,12})(?:\.(\d+))?$/.exec(text.trim().replace(/,/g, ''))
  if (!match || (match[2] ?? '').length > digits) return Number.NaN
  const minor = Number(match[1]) * 10 ** digits + Number((match[2] ?? '').padEnd(digits, '0') || '0')
  return minor > 0 ? minor : Number.NaN
}

/** A three-letter currency code Intl knows (upper-cased), or null. */
export function currencyCode(text: string): string | null {
  const code = text.trim().toUpperCase()
  if (!/^[A-Z]{3}$/.test(code)) return null
  try {
    minorUnits(code)
    return code
  } catch {
    return null
  }
}

/** A form value the page refuses before any service runs, as the API's `invalid_parameter` for that field. */
export function invalidField(param: string, message: string): ApiError {
  return new ApiError('invalid_parameter', { param, message })
}
