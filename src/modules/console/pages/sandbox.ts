import type { FastifyReply } from 'fastify'
import { ApiError } from '../../../http/errors.js'
import { html, type Html } from '../../../lib/html.js'
import type { PageContext } from '../router.js'
import { canChange } from './changes.js'

/**
 * The sandbox tools beside the objects they act on: shown only in the sandbox and only to those who may change
 * things; in production their POSTs answer 404, as the API's simulator routes (which do not exist there) do.
 */

const SANDBOX_ONLY = 'The sandbox tools exist only in the sandbox environment.'

export function inSandbox(ctx: PageContext): boolean {
  return ctx.scope?.environment === 'sandbox'
}

/** Whether the sandbox tools show: the sandbox environment, and someone who may change things. */
export function sandboxTools(ctx: PageContext): boolean {
  return inSandbox(ctx) && canChange(ctx)
}

/** The sandbox tools of a cardholder, account, card, authorization, transaction or dispute page, headed by `title`. */
export function sandboxPanel(ctx: PageContext, title: string, body: Html): Html {
  if (!sandboxTools(ctx)) return html``
  const id = `sbx-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`
  return panel(id, html`${title} <span class="badge neutral">Sandbox</span>`, body)
}

/** A sandbox tool of the network token, 3-D Secure, eSIM and processor fault pages; the page names its heading's id. */
export function sandboxSection(ctx: PageContext, id: string, title: string, body: Html): Html {
  if (!sandboxTools(ctx)) return html``
  return panel(id, html`${title} <span class="badge wait">sandbox</span>`, body)
}

function panel(id: string, heading: Html, body: Html): Html {
  return html`<section class="card sandbox" aria-labelledby="${id}"><h2 id="${id}">${heading}</h2>${body}</section>`
}

/** A sandbox-only POST reached in production: the same 404 page an unknown address answers. */
export function sandboxOnly(ctx: PageContext): FastifyReply | null {
  if (inSandbox(ctx)) return null
  const body = html`<p>${SANDBOX_ONLY}</p><p><a href="/console">Back to the console</a></p>`
  return ctx.render({ title: 'Page not found', body, flash: null }, 404)
}

/** A sandbox tool's POST in production, refused as a thrown `not_found` (for `consoleAction`'s refusal page). */
export function refuseOutsideSandbox(ctx: PageContext): void {
  if (!inSandbox(ctx))
    throw new ApiError('not_found', {
      message: 'Sandbox tools exist only in the sandbox environment.',
    })
}
