import type { Environment } from '../../../config.js'
import type { InSameTx } from '../../../db/tx.js'
import { isApiError } from '../../../http/errors.js'
import { audit } from '../../users/index.js'
import { html, type Html } from '../../../lib/html.js'
import type { PageContext } from '../router.js'

/** What the operator pages share: audit rows in the services' transactions, refusals as sentences, query and list parsing. */

export const OPERATOR = '/console/operator'
export const ORGANIZATIONS = `${OPERATOR}/organizations`
export const PROGRAMS = `${OPERATOR}/programs`
export const CLIENTS = `${OPERATOR}/clients`
export const NETWORK_POLICIES = `${OPERATOR}/network-policies`
export const ESIM = `${OPERATOR}/esim`
export const HEALTH = `${OPERATOR}/health`

export const ENV_LABEL: Record<string, string> = { sandbox: 'Sandbox', production: 'Production' }

/**
 * The audit row of an operator's change, handed to the service that makes it (`inSameTx`): the service writes it in
 * the change's own transaction, so the row exists exactly when the change committed. It is recorded under the
 * organization the change concerns (its owners read it in their audit log), or none for the platform's own objects.
 */
export function audited<T>(
  ctx: PageContext,
  action: string,
  objectId: (result: T) => string | null,
  organizationId: (result: T) => string | null = () => null,
): InSameTx<T> {
  const actor = ctx.actor()
  return async (trx, result) => {
    await audit(
      trx,
      { ...actor, organizationId: organizationId(result) },
      action,
      objectId(result),
      ctx.visitor.address,
    )
  }
}

/** What a service refused (an API error below 500), as the sentence the page shows; null for anything else (rethrown). */
export function refusal(err: unknown): string | null {
  if (!isApiError(err) || err.status >= 500) return null
  const fields = err.errors?.slice(0, 5).map((e) => `${e.param}: ${e.message}`) ?? []
  const more = (err.errors?.length ?? 0) > 5 ? ` (and ${err.errors!.length - 5} more)` : ''
  return fields.length > 0 ? `${err.message} ${fields.join('; ')}${more}.` : err.message
}

/** One query parameter as text ('' when absent). */
export function query(ctx: PageContext, name: string): string {
  const value = (ctx.req.query as Record<string, unknown>)[name]
  return typeof value === 'string'
    ? value.slice(0, 512)
    : Array.isArray(value) && typeof value[0] === 'string'
      ? value[0].slice(0, 512)
      : ''
}

/** One path parameter. */
export function param(ctx: PageContext, name: string): string {
  return (ctx.req.params as Record<string, string>)[name] ?? ''
}

/** The values of a repeated field (checkboxes). */
export function many(ctx: PageContext, name: string): string[] {
  const value = ctx.form[name]
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}

/** A list typed one a line (or separated by commas or spaces): IP ranges, currencies. */
export function items(text: string): string[] {
  return text
    .split(/[\s,]+/)
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/** The environments this deployment serves, as select options. */
export function environmentOptions(environments: readonly Environment[]): [string, string][] {
  return environments.map((e) => [e, ENV_LABEL[e] ?? e])
}

/** An organization in a list: its name linking to its page, and its id. */
export function organizationCell(id: string, names: ReadonlyMap<string, string>): Html {
  return html`<a href="${ORGANIZATIONS}/${id}">${names.get(id) ?? id}</a><br><code>${id}</code>`
}

/** A filter value kept only when it is one of `allowed`. */
export function oneOf(value: string, allowed: readonly string[]): string {
  return allowed.includes(value) ? value : ''
}
