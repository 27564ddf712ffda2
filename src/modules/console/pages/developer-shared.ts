import type { InSameTx } from '../../../db/tx.js'
import type { RequestCtx } from '../../../http/context.js'
import {
  deliveredToNamedEndpoint,
  EVENT_PREFIXES,
  EVENT_TYPES,
  eventPrefix,
  SUBSCRIPTION_FORMS,
} from '../../events/index.js'
import { audit } from '../../users/index.js'
import type { DeliveryView, EndpointView } from '../../webhooks/index.js'
import { allowed } from '../access.js'
import { checkboxGroup, formatTime } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { PageContext } from '../router.js'

/** What the Webhooks and Events pages share: the caller as the services know it, audit rows, event choices, the delivery cells. */

export const WEBHOOKS = '/console/developers/webhooks'
export const EVENTS = '/console/developers/events'

/**
 * The console's person as the webhooks and events services know a caller: the organization and the selected
 * environment, named by the session (no API client, no scope: the console's role guard has decided already, and the
 * events services are told a member reads every event type, `'every'`).
 */
export function callerOf(ctx: PageContext): RequestCtx {
  const scope = ctx.scope!
  return {
    requestId: String(ctx.req.id),
    organizationId: scope.organizationId,
    environment: scope.environment,
    clientId: `console:${ctx.session.user.id}`,
    scopes: new Set(),
  }
}

/** Whether the person may change things here (owners and developers; viewers read). */
export function canChange(ctx: PageContext): boolean {
  return allowed(ctx.session.user.role, 'organization', 'POST')
}

/** The audit row of a change to the organization's webhooks, written by the service in the change's own transaction. */
export function auditedChange<T>(
  ctx: PageContext,
  action: string,
  objectId: (result: T) => string | null,
): InSameTx<T> {
  const actor = { ...ctx.actor(), organizationId: ctx.scope!.organizationId }
  return async (trx, result) => {
    await audit(trx, actor, action, objectId(result), ctx.visitor.address)
  }
}

/** The same audit row written after a change that took several transactions (a replay since a time). */
export async function auditAfter(
  ctx: PageContext,
  action: string,
  objectId: string,
): Promise<void> {
  await auditedChange<null>(ctx, action, () => objectId)(ctx.deps.db, null)
}

/** The event types a subscription may choose, in catalogue order (not the test event, which goes only to the endpoint it tests). */
const SUBSCRIBABLE = EVENT_TYPES.filter((t) => !deliveredToNamedEndpoint(t))

/**
 * The events an endpoint receives as grouped checkboxes: every type (`*`), then one group per prefix with its
 * wildcard (`card.*`, types added later included) and its types. A value already chosen that no box offers is kept.
 */
export function eventChoices(checked: readonly string[], idPrefix: string): Html {
  const groups = EVENT_PREFIXES.map((prefix) => {
    const types = SUBSCRIBABLE.filter((t) => eventPrefix(t) === prefix)
    if (types.length === 0) return html``
    const options: [string, string][] = [
      [`${prefix}.*`, `Every ${prefix} event (${prefix}.*)`],
      ...types.map((t): [string, string] => [t, t]),
    ]
    return checkboxGroup('enabled_events', prefix, options, checked, {
      idPrefix: `${idPrefix}-${prefix}`,
    })
  })
  const offered = new Set<string>(['*', ...SUBSCRIBABLE, ...EVENT_PREFIXES.map((p) => `${p}.*`)])
  const others = checked.filter((v) => !offered.has(v))
  return html`<fieldset class="events"><legend>Events to send</legend>
<p class="hint">Tick every type, a whole group (types added to it later included) or single types. The event catalogue (<a href="/docs/guides/event-catalogue">/docs/guides/event-catalogue</a>) says what emits each.</p>
${checkboxGroup('enabled_events', 'All events', [['*', 'Every event type (*), types added later included']], checked, { idPrefix: `${idPrefix}-all` })}
${groups}${
  others.length > 0
    ? checkboxGroup(
        'enabled_events',
        'Other',
        others.map((v): [string, string] => [v, v]),
        checked,
        { idPrefix: `${idPrefix}-other` },
      )
    : ''
}</fieldset>`
}

/** The choices of the events list's type filter: every type, a prefix wildcard or an exact type. */
export const TYPE_FILTERS: readonly string[] = SUBSCRIPTION_FORMS.filter((f) => f !== '*')

/** An endpoint's health in words: healthy, failing since when, or why it is disabled. */
export function health(e: EndpointView): Html {
  if (e.status === 'enabled') {
    return e.failing_since
      ? html`<span class="warn">Failing since ${formatTime(new Date(e.failing_since))}</span>`
      : html`Healthy`
  }
  return e.disabled_reason === 'failing'
    ? html`<span class="warn">Disabled: failed for 72 hours without a success</span>`
    : html`Disabled by hand`
}

/** An id in short: its kind and its last 6 characters (`whe_…7Q2KXM`); the end of an id is its random part. */
export function shortId(id: string): string {
  const cut = id.indexOf('_') + 1
  return id.length - cut > 8 ? `${id.slice(0, cut)}…${id.slice(-6)}` : id
}

/**
 * An endpoint as one line where one is chosen: its URL, its description (cut at 40 characters) and its id in
 * short, so that two endpoints with one URL can be told apart.
 */
export function endpointLabel(e: { id: string; url: string; description: string | null }): string {
  const about = e.description ? e.description.replace(/\s+/g, ' ').trim() : ''
  const cut = about.length > 40 ? `${about.slice(0, 39)}…` : about
  return [e.url, cut, shortId(e.id)].filter(Boolean).join(' · ')
}

/** What an endpoint receives, in short. */
export function eventsSummary(e: EndpointView): string {
  if (e.enabled_events.includes('*')) return 'All events'
  return e.enabled_events.length === 1 ? '1 event type' : `${e.enabled_events.length} event types`
}

const STATUS_LABEL: Record<DeliveryView['status'], string> = {
  pending: 'Pending',
  delivered: 'Delivered',
  failed: 'Failed',
}

/** A delivery's status, with when a pending one is tried next. */
export function deliveryStatus(d: DeliveryView): Html {
  if (d.status === 'pending' && d.next_attempt_at)
    return html`${STATUS_LABEL.pending}<br><span class="muted">next try ${formatTime(new Date(d.next_attempt_at))}</span>`
  return html`${STATUS_LABEL[d.status]}`
}

/** Every attempt of a delivery, oldest first: its number, when it started, the answer's status or the error, how long it took. */
export function attemptList(d: DeliveryView): Html {
  if (d.attempts.length === 0) return html`<span class="muted">Not tried yet</span>`
  return html`<ol class="attempts">${d.attempts.map((a) => html`<li>Attempt ${a.attempt}: ${formatTime(new Date(a.started_at))}, ${a.response_status !== null ? html`<strong>HTTP ${a.response_status}</strong>` : ''}${a.error && a.response_status === null ? html`<strong>${a.error}</strong>` : ''}, <span class="duration">${a.duration_ms} ms</span>${answerBody(a.response_body)}</li>`)}</ol>`
}

/** The receiver's answer (its first 4 KiB), folded: what it said when it refused. */
function answerBody(body: string | null): Html | string {
  if (body === null) return ''
  return html`<details class="answer"><summary>Its answer (${body.length} characters${body.length >= 4096 ? ', the first 4 KiB' : ''})</summary><pre>${body}</pre></details>`
}

/** The datetime-local value (UTC, to the minute) of a moment. */
export function localValue(at: Date): string {
  return at.toISOString().slice(0, 16)
}

/** A datetime-local value read as UTC (`2026-11-25T09:30` or with seconds), as RFC 3339; null when it is not one. */
export function utcFromLocal(value: string): string | null {
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(:\d{2}(\.\d{1,3})?)?$/.exec(value.trim())
  if (!m) return null
  const text = `${m[1]}T${m[2]}${m[3] ?? ':00'}Z`
  const at = new Date(text)
  return Number.isNaN(at.getTime()) || at.toISOString().slice(0, 10) !== m[1]
    ? null
    : at.toISOString()
}
