import type { FastifyReply } from 'fastify'
import { getEvent, listEvents } from '../../events/index.js'
import {
  eventDeliveries,
  listEndpoints,
  MAX_ENDPOINTS_PER_ENVIRONMENT,
  replayOwnEvent,
} from '../../webhooks/index.js'
import {
  cursorPager,
  details,
  formatTime,
  getForm,
  postForm,
  selectField,
  table,
  type Flash,
} from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import { consolePath, type ConsolePage, type PageContext } from '../router.js'
import {
  attemptList,
  auditedChange,
  callerOf,
  canChange,
  deliveryStatus,
  endpointLabel,
  shortId,
  EVENTS,
  TYPE_FILTERS,
  WEBHOOKS,
} from './developer-shared.js'
import { idLink, linkedJson, relatedIds } from './id-links.js'
import { oneOf, param, query, refusal } from './operator-shared.js'

/** The object an event carries, in short: its kind and id. */
function objectOf(data: { object: unknown }): { kind: string; id: string } {
  const object = (data.object ?? {}) as { object?: unknown; id?: unknown }
  return {
    kind: typeof object.object === 'string' ? object.object : '',
    id: typeof object.id === 'string' ? object.id : '',
  }
}

/** Beside an endpoint's URL: its description and its id in short. */
function endpointAbout(e: { description: string | null } | undefined, id: string): Html {
  return html`${e?.description ? html`${e.description} · ` : ''}<code>${shortId(id)}</code>`
}

async function eventsPage(ctx: PageContext): Promise<FastifyReply> {
  const type = oneOf(query(ctx, 'type'), TYPE_FILTERS)
  const after = query(ctx, 'after')
  const page = await listEvents(ctx.deps, callerOf(ctx), 'every', {
    limit: 25,
    ...(type ? { type } : {}),
    ...(after ? { starting_after: after } : {}),
  })
  const options: [string, string][] = [
    ['', 'All types'],
    ...TYPE_FILTERS.map((t): [string, string] => [t, t.endsWith('.*') ? `${t} (all)` : t]),
  ]
  return ctx.render({
    title: 'Events',
    body: html`<p class="muted">What happened in this environment, newest first; events are kept 30 days and can be sent again from their page.</p>
${getForm(EVENTS, html`<div>${selectField('type', 'Type', options, type)}</div><button type="submit" class="secondary">Filter</button>`, 'Filter events')}
${table({
  caption: type ? `Events of type ${type}` : 'Events',
  rows: page.data,
  empty: type ? 'No event of this type in the last 30 days.' : 'No event in the last 30 days.',
  columns: [
    { header: 'Type', cell: (e) => html`<a href="${EVENTS}/${e.id}">${e.type}</a>` },
    { header: 'Event', cell: (e) => html`<code>${e.id}</code>` },
    {
      header: 'Object',
      cell: (e) => {
        const o = objectOf(e.data)
        return o.id ? html`${o.kind} ${idLink(o.id)}` : o.kind
      },
    },
    { header: 'Created', cell: (e) => formatTime(new Date(e.created_at)) },
  ],
})}
${cursorPager(EVENTS, { type }, page.next_cursor, after === '')}`,
  })
}

async function eventPage(
  ctx: PageContext,
  id: string,
  flash?: Flash,
  chosen = '',
  status = 200,
): Promise<FastifyReply> {
  const caller = callerOf(ctx)
  const event = await getEvent(ctx.deps, caller, 'every', id)
  const [deliveries, endpoints] = await Promise.all([
    eventDeliveries(ctx.deps, caller, event.id),
    listEndpoints(ctx.deps, caller, { limit: MAX_ENDPOINTS_PER_ENVIRONMENT }),
  ])
  const byId = new Map(endpoints.data.map((e) => [e.id, e]))
  const enabled = endpoints.data.filter((e) => e.status === 'enabled')
  const object = objectOf(event.data)
  const related = relatedIds(event.data.object, object.id)
  const replay = !canChange(ctx)
    ? html``
    : enabled.length === 0
      ? html`<section class="card" aria-labelledby="replay-h"><h2 id="replay-h">Replay</h2><p class="muted">No enabled endpoint in this environment: <a href="${WEBHOOKS}">add or enable one</a> to send events again.</p></section>`
      : html`<section class="card" aria-labelledby="replay-h"><h2 id="replay-h">Replay</h2>
<p class="muted">Sends the event again, unchanged, with the next <code>Svc-Delivery-Attempt</code> number.</p>
${postForm(
  `${EVENTS}/${event.id}/replay`,
  ctx.csrf,
  html`${selectField(
    'webhook_endpoint_id',
    'To',
    [
      ['', 'Every enabled endpoint that takes this type'],
      ...enabled.map((e): [string, string] => [e.id, endpointLabel(e)]),
    ],
    chosen,
  )}
<button type="submit" class="primary">Replay event</button>`,
  { label: 'Replay the event' },
)}</section>`
  return ctx.render(
    {
      title: `Event ${event.type}`,
      flash,
      body: html`${details([
        ['Id', html`<code>${event.id}</code>`],
        ['Type', html`<code>${event.type}</code>`],
        ['Object', object.id ? html`${object.kind} ${idLink(object.id)}` : object.kind],
        ...(related.length > 0
          ? [
              [
                'Related',
                html`${related.map((r, i) => html`${i > 0 ? ', ' : ''}${idLink(r)}`)}`,
              ] as [string, Html],
            ]
          : []),
        ['Created', formatTime(new Date(event.created_at))],
        ['API version', event.api_version],
      ])}
<h2 id="deliveries-h">Deliveries</h2>
${table({
  caption: 'Deliveries by endpoint',
  rows: deliveries,
  empty: 'No endpoint took this event.',
  columns: [
    {
      header: 'Endpoint',
      cell: (d) =>
        html`<a href="${WEBHOOKS}/${d.webhook_endpoint_id}">${byId.get(d.webhook_endpoint_id)?.url ?? d.webhook_endpoint_id}</a><br><span class="muted">${endpointAbout(byId.get(d.webhook_endpoint_id), d.webhook_endpoint_id)}</span>`,
    },
    { header: 'Status', cell: (d) => deliveryStatus(d) },
    { header: 'Attempts', cell: (d) => attemptList(d) },
  ],
})}
${replay}
<h2 id="json-h">The event as delivered</h2>
<pre class="json">${linkedJson(event, event.id)}</pre>`,
    },
    status,
  )
}

/** Events: the environment's events with a type filter, and one event's JSON, its deliveries and a replay (audited). */
export const eventsPages: ConsolePage = {
  name: 'events',
  register(router) {
    router.get(EVENTS, 'organization', (ctx) => eventsPage(ctx))

    router.get(`${EVENTS}/:id`, 'organization', (ctx) => eventPage(ctx, param(ctx, 'id')))

    router.post(`${EVENTS}/:id/replay`, 'organization', async (ctx) => {
      const id = param(ctx, 'id')
      const endpointId = ctx.text('webhook_endpoint_id')
      const back = consolePath(ctx.text('return_to'))
      const returnTo =
        back && (back.startsWith(`${WEBHOOKS}/`) || back.startsWith(`${EVENTS}/`))
          ? back
          : `${EVENTS}/${id}`
      try {
        const replay = await replayOwnEvent(
          ctx.deps,
          callerOf(ctx),
          'every',
          id,
          endpointId || undefined,
          auditedChange(ctx, 'event.replayed', (r) => r.event_id),
        )
        const text =
          replay.queued === 0
            ? 'No enabled endpoint takes this event: nothing is sent.'
            : `The event is queued again for ${replay.queued === 1 ? '1 endpoint' : `${replay.queued} endpoints`}.`
        return ctx.redirect(returnTo, { kind: replay.queued === 0 ? 'info' : 'ok', text })
      } catch (err) {
        const text = refusal(err)
        if (text === null) throw err
        return eventPage(ctx, id, { kind: 'error', text }, endpointId, 422)
      }
    })
  },
}
