import type { FastifyReply } from 'fastify'
import { envelope } from '../../../http/error-handler.js'
import { ApiError, isApiError } from '../../../http/errors.js'
import { html, type Html } from '../../../lib/html.js'
import type { PageContext } from '../router.js'

/**
 * Refusals in words: what a page shows when the service refuses a change or cannot find an object — the /v1
 * error envelope's message (and each field's), with a link to the error's documentation, answered with its status.
 */

/** What a refused change answers, as /v1's error envelope says it. */
export interface Problem {
  code: string
  message: string
  doc_url: string
  param?: string
  errors?: { param: string; message: string }[]
}

/** A refusal in words: the envelope's message (and each field's), and a link to the error's documentation. */
export function problemBox(problem: Problem | null | undefined): Html {
  if (!problem) return html``
  const fields = problem.errors?.slice(0, 5) ?? []
  const items = fields.map((f) => html`<li><code>${f.param}</code>: ${f.message}</li>`)
  const list = fields.length > 0 ? html`<ul>${items}</ul>` : ''
  // One field refused: its name beside the message (several: each in the list).
  const param = problem.param && fields.length === 0 ? html` (<code>${problem.param}</code>)` : ''
  return html`<div class="flash error" role="alert"><p>${problem.message}${param}</p>${list}
<p><a href="${problem.doc_url}">About this error (<code>${problem.code}</code>)</a></p></div>`
}

/** A thrown ApiError as the Problem the page shows. */
export function problemOf(ctx: PageContext, err: ApiError): Problem {
  return envelope(err, String(ctx.req.id), ctx.deps.config.baseUrl).error as Problem
}

/** A thrown ApiError in words (`problemBox` of its envelope). */
export function errorInWords(ctx: PageContext, err: ApiError): Html {
  return problemBox(problemOf(ctx, err))
}

/** A form value the page refuses before any service runs, as the API's `invalid_parameter` for that field. */
export function invalidField(param: string, message: string): ApiError {
  return new ApiError('invalid_parameter', { param, message })
}

/** An object page that could not be read (not found, another environment's object): its error as a page. */
export function notFoundPage(ctx: PageContext, title: string, err: unknown): FastifyReply {
  if (!isApiError(err) || err.status >= 500) throw err
  const body = html`${errorInWords(ctx, err)}<p><a href="/console">Back to the console</a></p>`
  return ctx.render({ title, body, flash: null }, err.status)
}

/**
 * A problem page already sent. A FastifyReply is thenable (it settles when the answer has gone out), so it cannot
 * be what a promise resolves to: awaiting it yields undefined, and a page that then went on reading its data threw
 * after its 404 was sent (an error-level log line per not-found page). Wrapped, it reaches the handler intact.
 */
export interface SentPage {
  sent: FastifyReply
}

/**
 * Reads a page's data; an ApiError (a bad cursor, an unknown id) becomes its page, sent and handed back wrapped
 * (the handler returns `sent`), anything else is rethrown.
 */
export async function orProblem<T>(
  ctx: PageContext,
  title: string,
  read: () => Promise<T>,
): Promise<T | SentPage> {
  try {
    return await read()
  } catch (err) {
    return { sent: notFoundPage(ctx, title, err) }
  }
}
