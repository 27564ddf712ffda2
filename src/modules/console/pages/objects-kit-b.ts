import { randomUUID } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import type { Scope } from '../../../http/context.js'
import { ApiError, isApiError } from '../../../http/errors.js'
import { runIdempotent } from '../../../http/idempotency.js'
import { audit } from '../../users/index.js'
import { minorUnits, type Flash } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { PageContext } from '../router.js'
import { canChange, problemBox, problemOf } from './objects-kit.js'

/**
 * What the object pages of network tokens, 3-D Secure, eSIM, reports and search add to `objects-kit.ts` (whose
 * badges, links, keys, events and request context they share): refusals in words as thrown errors, the sandbox
 * panel with its own heading id, and `consoleAction`, a change whose result is a page to go to, run under the
 * form's key by the same `runIdempotent` as the other object pages.
 */

/** The scope of an organization page (the router gives one to every `organization` route). */
export function scopeOf(ctx: PageContext): Scope {
  if (!ctx.scope) throw new ApiError('not_found')
  return ctx.scope
}

/** Whether the sandbox tools show: the sandbox environment, and someone who may change things. */
export function sandboxTools(ctx: PageContext): boolean {
  return ctx.scope?.environment === 'sandbox' && canChange(ctx)
}

/** A sandbox tool's POST in production: refused like the API's simulator routes (which do not exist there). */
export function refuseOutsideSandbox(ctx: PageContext): void {
  if (ctx.scope?.environment !== 'sandbox') throw new ApiError('not_found', { message: 'Sandbox tools exist only in the sandbox environment.' })
}

/** A refusal in words: the envelope's message (and its field errors), with a link to the code's documentation. */
export function errorInWords(ctx: PageContext, err: ApiError): Html {
  return problemBox(problemOf(ctx, err))
}

/** A sandbox tool's frame: shown only in the sandbox and to people who may change things (the POST checks again). */
export function sandboxPanel(ctx: PageContext, id: string, title: string, body: Html): Html {
  if (!sandboxTools(ctx)) return html``
  return html`<section class="card sandbox" aria-labelledby="${id}"><h2 id="${id}">${title} <span class="badge wait">sandbox</span></h2>${body}</section>`
}

/** Where a change leads once it is done: the page of its result, with the message to show there. */
export interface ActionResult { to: string; text: string; objectId: string | null }

/**
 * Runs one form's change as the API runs a request with an Idempotency-Key (`runIdempotent`, as `act` in
 * objects-kit.ts does): the form's hidden `idempotency_key` names it; the change, its audit row (`action`) and the
 * stored answer commit together, batched paths included; the same form sent again is answered from that answer (one
 * effect; the page of the result is shown again), and a copy sent while the first runs waits for it. A refusal of the
 * service goes to `refused`, which re-renders the form (with a fresh key) and the error in words.
 */
export async function consoleAction(
  ctx: PageContext, action: string, change: () => Promise<ActionResult>, refused: (err: ApiError) => Promise<FastifyReply> | FastifyReply,
): Promise<FastifyReply> {
  const scope = scopeOf(ctx)
  const fields = Object.fromEntries(Object.entries(ctx.form).filter(([k]) => k !== '_csrf' && k !== 'idempotency_key'))
  const key = ctx.text('idempotency_key') || randomUUID()
  const actor = { ...ctx.actor(), organizationId: scope.organizationId }
  for (let attempt = 0; ; attempt++) {
    try {
      const outcome = await runIdempotent(ctx.deps, {
        organizationId: scope.organizationId, environment: scope.environment, key: `console:${key}`, method: 'POST',
        path: ctx.req.url.split('?')[0], body: { console: fields }, requestId: String(ctx.req.id),
      }, async () => ({ status: 200, body: await change() }), async (result) => {
        await audit(ctx.deps.db, actor, action, (result as ActionResult).objectId, ctx.visitor.address)
      })
      const answer = JSON.parse(outcome.body) as ActionResult & { error?: { code: string; message: string; param?: string } }
      if (outcome.status >= 400) {
        const { code, message, param } = answer.error!
        return refused(new ApiError(code as never, { message, param }))
      }
      const flash: Flash = outcome.replay
        ? { kind: 'info', text: 'This form had already been sent: it took effect once. Here is its result.' }
        : { kind: 'ok', text: answer.text }
      return ctx.redirect(answer.to, flash)
    } catch (err) {
      if (isApiError(err) && err.code === 'idempotency_request_in_progress' && attempt < IN_PROGRESS_RETRIES) {
        await new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_WAIT_MS))
        continue
      }
      if (isApiError(err)) return refused(err)
      throw err
    }
  }
}

/** A double click sends the second form while the first runs: it waits (a few seconds at most) for the first's answer. */
const IN_PROGRESS_RETRIES = 20
const IN_PROGRESS_WAIT_MS = 150

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
