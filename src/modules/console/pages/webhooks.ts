import type { FastifyReply } from 'fastify'
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpointDeliveries,
  listEndpoints,
  MAX_ENDPOINTS_PER_ENVIRONMENT,
  replayOwnEndpoint,
  rotateSecret,
  sendTestEvent,
  updateEndpoint,
  type EndpointView,
} from '../../webhooks/index.js'
import {
  cursorPager,
  details,
  field,
  formatTime,
  postForm,
  table,
  textareaField,
  type Flash,
} from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import {
  attemptList,
  auditAfter,
  auditedChange,
  callerOf,
  canChange,
  deliveryStatus,
  eventChoices,
  EVENTS,
  eventsSummary,
  health,
  localValue,
  shortId,
  utcFromLocal,
  WEBHOOKS,
} from './developer-shared.js'
import { many, param, query, refusal } from './operator-shared.js'

interface EndpointForm {
  url?: string
  description?: string
  enabled_events?: string[]
}

const URL_HINT =
  'HTTPS on a public host. In the sandbox of a local run, http:// to a receiver on your own machine works too.'

function endpointFields(form: EndpointForm, idPrefix: string): Html {
  return html`${field({ name: 'url', id: `${idPrefix}-url`, label: 'URL', value: form.url, required: true, maxlength: 2048, hint: URL_HINT, inputmode: 'url', autocomplete: 'off' })}
${textareaField({ name: 'description', id: `${idPrefix}-description`, label: 'Description (optional)', value: form.description, rows: 2, maxlength: 5000 })}
${eventChoices(form.enabled_events ?? [], `${idPrefix}-ev`)}`
}

/** The form as typed, or why it cannot be sent (the API's own bounds, checked before the service). */
function readEndpointForm(ctx: PageContext): { form: EndpointForm; problem: string | null } {
  const form = {
    url: ctx.text('url').trim(),
    description: ctx.text('description'),
    enabled_events: many(ctx, 'enabled_events'),
  }
  const problem =
    form.url === '' || form.url.length > 2048
      ? 'Give the endpoint a URL (2,048 characters at most).'
      : form.description.length > 5000
        ? 'The description is longer than 5,000 characters.'
        : form.enabled_events.length === 0
          ? 'Choose at least one event type to send.'
          : form.enabled_events.length > 100
            ? 'Choose at most 100 event types (a group takes a whole prefix).'
            : null
  return { form, problem }
}

async function listPage(
  ctx: PageContext,
  flash?: Flash,
  form: EndpointForm = {},
  status = 200,
): Promise<FastifyReply> {
  const endpoints = await listEndpoints(ctx.deps, callerOf(ctx), {
    limit: MAX_ENDPOINTS_PER_ENVIRONMENT,
  })
  const create = canChange(ctx)
    ? html`<section class="card" aria-labelledby="create-h"><h2 id="create-h">Add an endpoint</h2>
<p class="muted">Each event is POSTed as JSON and signed with the endpoint's secret (the <code>Svc-Signature</code> header). At most ${MAX_ENDPOINTS_PER_ENVIRONMENT} endpoints per environment.</p>
${postForm(
  WEBHOOKS,
  ctx.csrf,
  html`${endpointFields(form, 'new')}
<button type="submit" class="primary">Add endpoint</button>`,
  { label: 'Add an endpoint' },
)}</section>`
    : html``
  return ctx.render(
    {
      title: 'Webhooks',
      flash,
      body: html`${table({
        caption: 'Endpoints',
        rows: endpoints.data,
        empty: 'No endpoint yet: add one to receive events.',
        columns: [
          {
            header: 'URL',
            cell: (e) =>
              html`<a href="${WEBHOOKS}/${e.id}">${e.url}</a><br><span class="muted">${e.description ? html`${e.description} · ` : ''}<code>${shortId(e.id)}</code></span>`,
          },
          { header: 'Status', cell: (e) => (e.status === 'enabled' ? 'Enabled' : 'Disabled') },
          { header: 'Health', cell: (e) => health(e) },
          { header: 'Events', cell: (e) => eventsSummary(e) },
        ],
      })}
${create}`,
    },
    status,
  )
}

/** The page that shows a new secret: the only time it is ever shown. */
function secretPage(
  ctx: PageContext,
  endpoint: EndpointView,
  text: string,
  status: number,
): FastifyReply {
  return ctx.render(
    {
      title: 'Signing secret',
      flash: { kind: 'ok', text },
      body: html`<div class="card"><p>The signing secret of <strong>${endpoint.url}</strong>. Copy it now into your receiver's configuration: <strong>it is shown only this once</strong>.</p>
<p><code class="mono secret">${endpoint.secret ?? ''}</code></p>
<p class="muted">Verify each delivery's <code>Svc-Signature</code> header with it (HMAC-SHA256 of <code>&lt;t&gt;.&lt;raw body&gt;</code>).</p>
<p><a href="${WEBHOOKS}/${endpoint.id}">Go to the endpoint</a></p></div>`,
    },
    status,
  )
}

interface EndpointPageState {
  edit?: EndpointForm
  since?: string
}

async function endpointPage(
  ctx: PageContext,
  id: string,
  flash?: Flash,
  state: EndpointPageState = {},
  status = 200,
): Promise<FastifyReply> {
  const caller = callerOf(ctx)
  const endpoint = await getEndpoint(ctx.deps, caller, id)
  const after = query(ctx, 'after')
  const log = await listEndpointDeliveries(ctx.deps, caller, endpoint.id, {
    limit: 20,
    ...(after ? { starting_after: after } : {}),
  })
  const base = `${WEBHOOKS}/${endpoint.id}`
  const writer = canChange(ctx)
  const enabled = endpoint.status === 'enabled'
  const edit = state.edit ?? {
    url: endpoint.url,
    description: endpoint.description ?? '',
    enabled_events: endpoint.enabled_events,
  }
  const since = state.since ?? localValue(new Date(ctx.deps.clock.now().getTime() - 60 * 60 * 1000))
  const notEnabled = html`<p class="muted">Enable the endpoint first: nothing is sent to a disabled endpoint.</p>`
  const actions = writer
    ? html`<section class="card" aria-labelledby="test-h"><h2 id="test-h">Send a test event</h2>
<p class="muted">A <code>webhook_endpoint.test</code> event goes to this endpoint only, whatever it subscribes to; it appears in the delivery log below.</p>
${enabled ? postForm(`${base}/test`, ctx.csrf, html`<button type="submit" class="secondary">Send test event</button>`, { label: 'Send a test event' }) : notEnabled}</section>
<section class="card" aria-labelledby="replay-h"><h2 id="replay-h">Replay events since a time</h2>
<p class="muted">Sends again every event this endpoint takes that was created at or after the time (UTC), delivered or not: events are kept 30 days.</p>
${
  enabled
    ? postForm(
        `${base}/replay`,
        ctx.csrf,
        html`<label for="f-since">Since (UTC)<span class="hint" id="f-since-hint">Date and time in UTC, at most 30 days ago.</span></label>
<input id="f-since" name="since" type="datetime-local" value="${since}" required aria-describedby="f-since-hint">
<button type="submit" class="secondary">Replay events</button>`,
        { label: 'Replay events since a time' },
      )
    : notEnabled
}</section>
<section class="card" aria-labelledby="status-h"><h2 id="status-h">${enabled ? 'Disable' : 'Enable'}</h2>
<p class="muted">${enabled ? 'A disabled endpoint receives nothing; deliveries waiting for it end unsent (replay them after enabling it again).' : 'Enabling starts deliveries again with new events and clears the failure record; replay what it missed.'}</p>
${postForm(`${base}/status`, ctx.csrf, html`<input type="hidden" name="status" value="${enabled ? 'disabled' : 'enabled'}"><button type="submit" class="${enabled ? 'danger' : 'primary'}">${enabled ? 'Disable endpoint' : 'Enable endpoint'}</button>`, { label: enabled ? 'Disable the endpoint' : 'Enable the endpoint' })}</section>
<section class="card" aria-labelledby="delete-h"><h2 id="delete-h">Delete</h2>
<p class="muted">Deleting stops every delivery to this URL for good; its delivery log goes with it.</p>
<p><a href="${base}/delete">Delete this endpoint…</a></p></section>
<section class="card" aria-labelledby="rotate-h"><h2 id="rotate-h">Rotate the signing secret</h2>
<p class="muted">A new secret is shown once. For 24 hours both the new and the old secret sign every delivery (two <code>v1=</code> values), so your receiver can switch without missing any.</p>
${postForm(`${base}/rotate`, ctx.csrf, html`<button type="submit" class="secondary">Rotate secret</button>`, { label: 'Rotate the signing secret' })}</section>
<section class="card" aria-labelledby="edit-h"><h2 id="edit-h">URL, description and events</h2>
${postForm(
  base,
  ctx.csrf,
  html`${endpointFields(edit, 'edit')}
<button type="submit" class="primary">Save changes</button>`,
  { label: 'Change the URL, description and events' },
)}</section>`
    : html``
  return ctx.render(
    {
      title: `Endpoint ${endpoint.url}`,
      flash,
      body: html`${details([
        ['Id', html`<code>${endpoint.id}</code>`],
        ['URL', html`<code>${endpoint.url}</code>`],
        ['Description', endpoint.description ?? html`<span class="muted">none</span>`],
        ['Status', enabled ? 'Enabled' : 'Disabled'],
        ['Health', health(endpoint)],
        ['Events', html`<code>${endpoint.enabled_events.join(' ')}</code>`],
        ['API version', endpoint.api_version],
        ['Created', formatTime(new Date(endpoint.created_at))],
      ])}
<h2 id="log-h">Delivery log</h2>
<p class="muted">Newest first: each event sent (or to be sent) here, with every attempt.</p>
${table({
  caption: 'Deliveries',
  rows: log.data,
  empty: 'Nothing delivered yet.',
  columns: [
    {
      header: 'Event',
      cell: (d) =>
        html`<a href="${EVENTS}/${d.event_id}">${d.event_type}</a><br><code>${d.event_id}</code>`,
    },
    { header: 'Status', cell: (d) => deliveryStatus(d) },
    { header: 'Attempts', cell: (d) => attemptList(d) },
    ...(writer && enabled
      ? [
          {
            header: 'Replay',
            cell: (d: (typeof log.data)[number]) =>
              postForm(
                `${EVENTS}/${d.event_id}/replay`,
                ctx.csrf,
                html`<input type="hidden" name="webhook_endpoint_id" value="${endpoint.id}"><input type="hidden" name="return_to" value="${base}"><button type="submit" class="secondary" aria-label="Replay ${d.event_type} ${d.event_id}">Replay</button>`,
                { class: 'inline' },
              ),
          },
        ]
      : []),
  ],
})}
${cursorPager(base, {}, log.next_cursor, after === '')}
${actions}`,
    },
    status,
  )
}

/** What the endpoint page answers when the service refused a change: the page again, with the refusal and what was typed. */
async function refused(
  ctx: PageContext,
  id: string,
  err: unknown,
  state: EndpointPageState = {},
): Promise<FastifyReply> {
  const text = refusal(err)
  if (text === null) throw err
  return endpointPage(ctx, id, { kind: 'error', text }, state, 422)
}

/**
 * Webhooks: the endpoints of the selected environment and adding one (its secret shown once), and each endpoint's
 * page: details and health, the delivery log, a test event, a replay since a time, enable or disable, a new secret,
 * its URL, description and events. Every change goes through the service `/v1/webhook_endpoints` calls, audited.
 */
export const webhooksPages: ConsolePage = {
  name: 'webhooks',
  register(router) {
    router.get(WEBHOOKS, 'organization', (ctx) => listPage(ctx))

    router.post(WEBHOOKS, 'organization', async (ctx) => {
      const { form, problem } = readEndpointForm(ctx)
      if (problem) return listPage(ctx, { kind: 'error', text: problem }, form, 422)
      try {
        const endpoint = await createEndpoint(
          ctx.deps,
          callerOf(ctx),
          {
            url: form.url!,
            enabled_events: form.enabled_events!,
            description: form.description || null,
          },
          auditedChange(ctx, 'webhook_endpoint.created', (e) => e.id),
        )
        return secretPage(
          ctx,
          endpoint,
          `The endpoint ${endpoint.url} is added (${endpoint.id}).`,
          201,
        )
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return listPage(ctx, { kind: 'error', text }, form, 422)
      }
    })

    router.get(`${WEBHOOKS}/:id`, 'organization', (ctx) => endpointPage(ctx, param(ctx, 'id')))

    router.post(`${WEBHOOKS}/:id`, 'organization', async (ctx) => {
      const id = param(ctx, 'id')
      const current = await getEndpoint(ctx.deps, callerOf(ctx), id)
      const { form, problem } = readEndpointForm(ctx)
      if (problem)
        return endpointPage(ctx, id, { kind: 'error', text: problem }, { edit: form }, 422)
      try {
        // The URL is checked again (its host resolved) only when it changes.
        await updateEndpoint(
          ctx.deps,
          callerOf(ctx),
          id,
          {
            ...(form.url !== current.url ? { url: form.url } : {}),
            description: form.description || null,
            enabled_events: form.enabled_events,
          },
          auditedChange(ctx, 'webhook_endpoint.updated', (e) => e.id),
        )
        return ctx.redirect(`${WEBHOOKS}/${id}`, { kind: 'ok', text: 'The endpoint is changed.' })
      } catch (err) {
        return refused(ctx, id, err, { edit: form })
      }
    })

    router.post(`${WEBHOOKS}/:id/status`, 'organization', async (ctx) => {
      const id = param(ctx, 'id')
      const status = ctx.text('status')
      if (status !== 'enabled' && status !== 'disabled')
        return endpointPage(
          ctx,
          id,
          { kind: 'error', text: 'Choose enabled or disabled.' },
          {},
          422,
        )
      try {
        await updateEndpoint(
          ctx.deps,
          callerOf(ctx),
          id,
          { status },
          auditedChange(ctx, `webhook_endpoint.${status}`, (e) => e.id),
        )
        return ctx.redirect(`${WEBHOOKS}/${id}`, {
          kind: 'ok',
          text:
            status === 'enabled'
              ? 'The endpoint is enabled.'
              : 'The endpoint is disabled: nothing is sent to it.',
        })
      } catch (err) {
        return refused(ctx, id, err)
      }
    })

    // Deleting cannot be undone: the endpoint's page links here, and only this page's form deletes it.
    router.get(`${WEBHOOKS}/:id/delete`, 'organization', async (ctx) => {
      const id = param(ctx, 'id')
      const endpoint = await getEndpoint(ctx.deps, callerOf(ctx), id)
      const back = `${WEBHOOKS}/${endpoint.id}`
      if (!canChange(ctx))
        return ctx.redirect(back, {
          kind: 'info',
          text: 'Only owners and developers can delete it.',
        })
      return ctx.render({
        title: 'Delete this webhook endpoint?',
        body: html`<div class="card"><p>Delete the endpoint <strong>${endpoint.url}</strong>${endpoint.description ? html` (${endpoint.description})` : ''}, <code>${endpoint.id}</code>?</p>
<p>Nothing is sent to it any more, deliveries waiting for it end unsent, and its delivery log is removed. <strong>This cannot be undone</strong>: to receive events there again, add a new endpoint (it gets a new signing secret).</p>
${postForm(`${back}/delete`, ctx.csrf, html`<button type="submit" class="danger">Delete endpoint</button>`, { label: 'Confirm deleting the endpoint' })}
<p><a href="${back}">Cancel: keep the endpoint</a></p></div>`,
      })
    })

    router.post(`${WEBHOOKS}/:id/delete`, 'organization', async (ctx) => {
      const id = param(ctx, 'id')
      try {
        await deleteEndpoint(
          ctx.deps,
          callerOf(ctx),
          id,
          auditedChange(ctx, 'webhook_endpoint.deleted', (e) => e.id),
        )
        return ctx.redirect(WEBHOOKS, { kind: 'ok', text: 'The endpoint is deleted.' })
      } catch (err) {
        return refused(ctx, id, err)
      }
    })

    router.post(`${WEBHOOKS}/:id/rotate`, 'organization', async (ctx) => {
      const endpoint = await rotateSecret(
        ctx.deps,
        callerOf(ctx),
        param(ctx, 'id'),
        auditedChange(ctx, 'webhook_endpoint.secret_rotated', (e) => e.id),
      )
      return secretPage(
        ctx,
        endpoint,
        'The secret is rotated: the previous one keeps signing for 24 hours.',
        200,
      )
    })

    router.post(`${WEBHOOKS}/:id/test`, 'organization', async (ctx) => {
      const id = param(ctx, 'id')
      try {
        const event = await sendTestEvent(
          ctx.deps,
          callerOf(ctx),
          id,
          auditedChange(ctx, 'webhook_endpoint.test_sent', () => id),
        )
        return ctx.redirect(`${WEBHOOKS}/${id}`, {
          kind: 'ok',
          text: `Test event ${event.id} is queued; its delivery appears in the log below.`,
        })
      } catch (err) {
        return refused(ctx, id, err)
      }
    })

    router.post(`${WEBHOOKS}/:id/replay`, 'organization', async (ctx) => {
      const id = param(ctx, 'id')
      const typed = ctx.text('since')
      const since = utcFromLocal(typed)
      if (since === null) {
        await getEndpoint(ctx.deps, callerOf(ctx), id)
        return endpointPage(
          ctx,
          id,
          { kind: 'error', text: 'Give a date and time (UTC), such as 2026-11-25T09:30.' },
          { since: typed },
          422,
        )
      }
      try {
        const replay = await replayOwnEndpoint(ctx.deps, callerOf(ctx), 'every', id, since)
        // The replay runs in batches of its own transactions; its audit row follows them.
        await auditAfter(ctx, 'webhook_endpoint.replayed', id)
        const text =
          replay.queued === 0
            ? 'No event this endpoint takes was created since then: nothing is sent.'
            : `${replay.queued} ${replay.queued === 1 ? 'event is' : 'events are'} queued for this endpoint again.`
        return ctx.redirect(`${WEBHOOKS}/${id}`, {
          kind: replay.queued === 0 ? 'info' : 'ok',
          text,
        })
      } catch (err) {
        return refused(ctx, id, err, { since: typed })
      }
    })
  },
}
