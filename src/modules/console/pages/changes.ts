import { randomUUID } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import type { AppDeps } from '../../../app-deps.js'
import type { RequestCtx, Scope } from '../../../http/context.js'
import { ApiError, isApiError } from '../../../http/errors.js'
import { runIdempotent } from '../../../http/idempotency.js'
import { checkBody } from '../../../http/validation.js'
import { html, type Html } from '../../../lib/html.js'
import { audit } from '../../users/index.js'
import { allowed } from '../access.js'
import { postForm, type Flash } from '../components.js'
import type { PageContext } from '../router.js'
import { problemOf, type Problem } from './refusals.js'

/**
 * Changes made from a console form, each exactly once: the form carries a one-time key (`keyField`), and the change
 * runs under it as /v1 runs a request with an Idempotency-Key (`runIdempotent`), with its audit row in the change's
 * transaction. `act` answers the /v1 call's own outcome (the page decides what to show); `consoleAction` answers a
 * redirect to the page of the result.
 */

/** Whether the person may change the organization's objects (owners and developers; a viewer reads only). */
export function canChange(ctx: PageContext): boolean {
  return allowed(ctx.session.user.role, 'organization', 'POST')
}

/** The scope of an organization page (the router gives one to every `organization` route). */
export function pageScope(ctx: PageContext): Scope {
  if (!ctx.scope) throw new ApiError('not_found')
  return ctx.scope
}

/** The modules' request context for a console request: its scope, a client id naming the person. */
export function apiCtx(ctx: PageContext): RequestCtx {
  return {
    ...ctx.scope!,
    requestId: String(ctx.req.id),
    clientId: `console:${ctx.session.user.id}`,
    scopes: new Set(),
  }
}

/** The hidden one-time key of a change form: sent twice (a double click, a resubmitted page), it has one effect. */
export function keyField(): Html {
  return html`<input type="hidden" name="idempotency_key" value="${randomUUID()}">`
}

/**
 * A change form: the CSRF field, the one-time key, `body` (its fields) and one button. `label` names the form for
 * assistive technology; `tone` styles the button (danger for what cannot be undone).
 */
export function actionForm(
  ctx: PageContext,
  action: string,
  label: string,
  button: string,
  body: Html = html``,
  tone: 'primary' | 'secondary' | 'danger' = 'secondary',
): Html {
  const submit = html`<div><button type="submit" class="${tone}">${button}</button></div>`
  return postForm(action, ctx.csrf, html`${keyField()}${body}${submit}`, { label })
}

/** A second click's form, sent while the first runs, waits (a few seconds at most) for the first's answer. */
const IN_PROGRESS_RETRIES = 20
const IN_PROGRESS_WAIT_MS = 150

function waitForFirst(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, IN_PROGRESS_WAIT_MS))
}

/** One change: the /v1 call it stands for, the use case that performs it, and what the audit log calls it. */
export interface Change<T> {
  /** The /v1 method and path it stands for: the key is stored under them, as an API call's would be. */
  method: 'POST' | 'PATCH' | 'DELETE'
  path: string
  /** The JSON body /v1 would take; checked against `schema` (the route's) exactly as /v1 checks it. */
  body: Record<string, unknown> | (() => Record<string, unknown>)
  schema?: object
  /**
   * Runs the use case with the checked body and the dependencies of the change's unit of work (its effect
   * commits with the stored answer); `status` is what /v1 answers (201 for a creation).
   */
  run: (body: any, unit: AppDeps) => Promise<T>
  status?: number
  /** The audit action, and the id it records (default: the answer's id). */
  action: string
  auditId?: (result: T) => string | null
}

export type Outcome<T> =
  | { ok: true; object: T; replay: boolean }
  | { ok: false; problem: Problem; status: number }

/**
 * Performs a change from a console form: under the form's one-time key (`idempotency_key`), with the guarantee of
 * /v1's Idempotency-Key (`runIdempotent`), the route's body schema, and an audit row in the change's transaction
 * (none for a refusal or a replay). A form without a key gets a fresh one (the change then is not deduplicated).
 */
export async function act<T>(ctx: PageContext, change: Change<T>): Promise<Outcome<T>> {
  // A second copy of the form waits for the first's answer instead of showing "in progress": both land on one result.
  for (let attempt = 0; ; attempt++) {
    const outcome = await actOnce(ctx, change)
    const waiting = !outcome.ok && outcome.problem.code === 'idempotency_request_in_progress'
    if (!waiting || attempt >= IN_PROGRESS_RETRIES) return outcome
    await waitForFirst()
  }
}

async function actOnce<T>(ctx: PageContext, change: Change<T>): Promise<Outcome<T>> {
  const scope = ctx.scope!
  const key = ctx.text('idempotency_key') || randomUUID()
  try {
    const sent = typeof change.body === 'function' ? change.body() : change.body
    const outcome = await runIdempotent(
      ctx.deps,
      {
        organizationId: scope.organizationId,
        environment: scope.environment,
        key: `console:${key}`,
        method: change.method,
        path: change.path,
        body: sent,
        requestId: String(ctx.req.id),
      },
      async (unit) => {
        const body = change.schema ? checkBody(change.schema, structuredClone(sent)) : sent
        return { status: change.status ?? 200, body: await change.run(body, unit) }
      },
      async (result, db) => {
        const objectId = change.auditId
          ? change.auditId(result as T)
          : ((result as { id?: string }).id ?? null)
        // In the change's transaction when it has one; after a batched statement that committed on its own, alone.
        const actor = { ...ctx.actor(), organizationId: scope.organizationId }
        await audit(db, actor, change.action, objectId, ctx.visitor.address)
      },
    )
    const parsed = JSON.parse(outcome.body) as T & { error?: Problem }
    if (outcome.status >= 400) return { ok: false, problem: parsed.error!, status: outcome.status }
    return { ok: true, object: parsed, replay: outcome.replay }
  } catch (err) {
    if (isApiError(err) && err.status < 500)
      return { ok: false, problem: problemOf(ctx, err), status: err.status }
    throw err
  }
}

/** The flash text after a change: what happened, or that the form had been sent already. */
export function doneText(outcome: { replay: boolean }, text: string): string {
  return outcome.replay ? `This form was already sent: nothing changed again. ${text}` : text
}

/** Where a change leads once it is done: the page of its result, with the message to show there. */
export interface ActionResult {
  to: string
  text: string
  objectId: string | null
}

/**
 * Runs one form's change as the API runs a request with an Idempotency-Key (`runIdempotent`, as `act` does): the
 * form's hidden `idempotency_key` names it; the change, its audit row (`action`) and the stored answer commit
 * together, batched paths included; the same form sent again is answered from that answer (one effect; the page of
 * the result is shown again), and a copy sent while the first runs waits for it. A refusal of the service goes to
 * `refused`, which re-renders the form (with a fresh key) and the error in words.
 */
export async function consoleAction(
  ctx: PageContext,
  action: string,
  change: (unit: AppDeps) => Promise<ActionResult>,
  refused: (err: ApiError) => Promise<FastifyReply> | FastifyReply,
): Promise<FastifyReply> {
  const scope = pageScope(ctx)
  const fields = Object.fromEntries(
    Object.entries(ctx.form).filter(([k]) => k !== '_csrf' && k !== 'idempotency_key'),
  )
  const key = ctx.text('idempotency_key') || randomUUID()
  const actor = { ...ctx.actor(), organizationId: scope.organizationId }
  for (let attempt = 0; ; attempt++) {
    try {
      const outcome = await runIdempotent(
        ctx.deps,
        {
          organizationId: scope.organizationId,
          environment: scope.environment,
          key: `console:${key}`,
          method: 'POST',
          path: ctx.req.url.split('?')[0],
          body: { console: fields },
          requestId: String(ctx.req.id),
        },
        async (unit) => ({ status: 200, body: await change(unit) }),
        async (result, db) => {
          await audit(db, actor, action, (result as ActionResult).objectId, ctx.visitor.address)
        },
      )
      const answer = JSON.parse(outcome.body) as ActionResult & {
        error?: Pick<Problem, 'code' | 'message' | 'param'>
      }
      if (outcome.status >= 400) {
        const { code, message, param } = answer.error!
        return refused(new ApiError(code as never, { message, param }))
      }
      const flash: Flash = outcome.replay
        ? {
            kind: 'info',
            text: 'This form had already been sent: it took effect once. Here is its result.',
          }
        : { kind: 'ok', text: answer.text }
      return ctx.redirect(answer.to, flash)
    } catch (err) {
      if (
        isApiError(err) &&
        err.code === 'idempotency_request_in_progress' &&
        attempt < IN_PROGRESS_RETRIES
      ) {
        await waitForFirst()
        continue
      }
      if (isApiError(err)) return refused(err)
      throw err
    }
  }
}
