import type { FastifyReply } from 'fastify'
import type { AppDeps } from '../../../app-deps.js'
import type { RequestCtx } from '../../../http/context.js'
import { isApiError } from '../../../http/errors.js'
import {
  ACCOUNT_SCOPE,
  AUTHORIZATION_SCOPE,
  CARD_SCOPE,
  CARDHOLDER_SCOPE,
  TRANSACTION_SCOPE,
  type ScopeLookup,
} from '../../../http/ownership.js'
import type { Hook } from '../../../lib/slots.js'
import { retrieveAuthentication } from '../../authentications/index.js'
import { retrieveRule } from '../../authorization-rules/index.js'
import { searchCardholders } from '../../cardholders/index.js'
import { requireDispute } from '../../disputes/index.js'
import { listOrders, retrieveEsim, retrieveOrder, type OrderView } from '../../esim/index.js'
import { findEvent } from '../../events/index.js'
import { retrieveToken } from '../../network-tokens/index.js'
import { retrieveReport } from '../../reports/index.js'
import { formatMoney, formatTime, table } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { apiCtx } from './changes.js'
import { objectHref, objectLink, statusBadge } from './object-display.js'

export const SEARCH = '/console/search'

type Exists = (deps: AppDeps, ctx: RequestCtx, id: string) => Promise<boolean>

/** Whether a lookup that throws the owner's "not found" for another organization's or a missing object finds it. */
function found(lookup: (deps: AppDeps, ctx: RequestCtx, id: string) => Promise<unknown>): Exists {
  return async (deps, ctx, id) => {
    try {
      await lookup(deps, ctx, id)
      return true
    } catch (err) {
      if (isApiError(err) && err.status === 404) return false
      throw err
    }
  }
}

/** Whether an object the owner's scope hook finds belongs to this organization and environment. */
function scoped(hook: Hook<ScopeLookup>): Exists {
  return async (deps, ctx, id) => {
    const scope = await deps.hooks.get(hook)(deps.db, id)
    return (
      scope !== undefined &&
      scope.organization_id === ctx.organizationId &&
      scope.environment === ctx.environment
    )
  }
}

/** Every id prefix with a console page, and how its owner tells whether the id is this organization's in this environment. */
const FINDERS: Partial<Record<string, Exists>> = {
  chd: scoped(CARDHOLDER_SCOPE),
  acct: scoped(ACCOUNT_SCOPE),
  card: scoped(CARD_SCOPE),
  auth: scoped(AUTHORIZATION_SCOPE),
  arl: found(retrieveRule),
  txn: scoped(TRANSACTION_SCOPE),
  dsp: found((deps, ctx, id) => requireDispute(deps.db, ctx, id)),
  ntok: found(retrieveToken),
  tdsa: async (deps, ctx, id) =>
    deps.config.releases.has('three_d_secure') && found(retrieveAuthentication)(deps, ctx, id),
  esord: found(retrieveOrder),
  esim: found(retrieveEsim),
  rpt: found(retrieveReport),
  evt: async (deps, ctx, id) => {
    const row = await findEvent(deps.db, id)
    return (
      row !== undefined &&
      row.organization_id === ctx.organizationId &&
      row.environment === ctx.environment
    )
  },
}

/** Ids of kinds the console shows on another object's page, or not at all: what the search says of them. */
const ELSEWHERE: Record<string, string> = {
  le: "A ledger entry is listed on its account's page.",
  hold: "A hold is shown on its authorization's and its account's pages.",
  kyc: "A KYC attestation is listed on its cardholder's page.",
  kycdoc: "A KYC document is listed with its attestation on the cardholder's page.",
  whe: 'Webhook endpoints are on the Webhooks page.',
  whd: "A webhook delivery is listed on its endpoint's page and its event's page.",
  wha: "A delivery attempt is listed on its endpoint's page.",
  oc: 'API clients are on the API clients page.',
  prog: 'Programs are listed on the Programs page.',
  pkg: 'Packages are chosen when ordering an eSIM.',
  topup: 'Top-ups are listed on the eSIM they extend.',
  usr: 'People are on the Team page.',
  inv: 'Invitations are on the Team page.',
  aud: 'Audit entries are on the Audit log page.',
  org: 'This is an organization id.',
  h5: 'A hosted eSIM page session has no console page.',
  job: 'Background jobs have no console page.',
  req: 'A request id names one API request; it is in the logs, not the console.',
  pink: 'PIN keys are never shown in the console.',
  crs: 'Hosted card details sessions are never shown in the console.',
}

const ID = /^([a-z0-9]+)_[0-9A-Za-z]{10,40}$/

function cardholderName(c: {
  first_name?: string | null
  last_name?: string | null
  name?: string | null
}): string {
  return [c.first_name, c.last_name].filter(Boolean).join(' ') || c.name || ''
}

function searchBox(q: string): Html {
  return html`<form method="get" action="${SEARCH}" class="filters" role="search" aria-label="Search objects"><div><label for="search-page-q">Id, email or reference</label>
<input id="search-page-q" name="q" type="text" value="${q}" required maxlength="254" autocomplete="off" spellcheck="false"></div>
<div><button type="submit" class="primary">Search</button></div></form>`
}

async function searchPage(ctx: PageContext): Promise<FastifyReply> {
  const raw = (ctx.req.query as Record<string, unknown>).q
  const q = typeof raw === 'string' ? raw.trim().slice(0, 254) : ''
  const render = (body: Html, status = 200) =>
    ctx.render({ title: 'Search', body: html`${searchBox(q)}${body}` }, status)
  if (q === '')
    return render(
      html`<p class="muted">Search by any object id (chd_, acct_, card_, auth_, txn_, dsp_, ntok_, tdsa_, esord_, esim_, rpt_, evt_…), or a cardholder's email or reference.</p>`,
    )
  const rctx = apiCtx(ctx)
  const id = ID.exec(q)
  if (id) {
    const prefix = id[1]
    const finder = FINDERS[prefix]
    if (finder && (await finder(ctx.deps, rctx, q))) return ctx.redirect(objectHref(q)!)
    const other = ELSEWHERE[prefix]
    const where = rctx.environment === 'sandbox' ? 'the sandbox' : 'production'
    return render(
      html`<div class="flash error" role="alert"><p>Not found: no object <code>${q}</code> in ${where} of your organization.</p></div>
${finder ? html`<p class="muted">An id of the other environment is found after switching environments.</p>` : other ? html`<p class="muted">${other}</p>` : html`<p class="muted">This is not a kind of id the console knows.</p>`}`,
      404,
    )
  }
  const [cardholders, orders] = await Promise.all([
    searchCardholders(ctx.deps, rctx, q),
    q.length <= 128
      ? listOrders(ctx.deps, rctx, { reference: q, limit: 20 }).then((p) => p.data)
      : Promise.resolve([] as OrderView[]),
  ])
  if (cardholders.length === 0 && orders.length === 0) {
    return render(
      html`<div class="flash error" role="alert"><p>Not found: no cardholder has the email or reference “${q}”, and no eSIM order has that reference.</p></div>`,
      404,
    )
  }
  return render(html`${
    cardholders.length > 0
      ? table({
          caption: 'Cardholders with this email or reference',
          rows: cardholders,
          empty: '',
          columns: [
            {
              header: 'Cardholder',
              cell: (c) => html`${objectLink(c.id)}<br>${cardholderName(c as never)}`,
            },
            { header: 'Email', cell: (c) => c.email },
            { header: 'Reference', cell: (c) => c.reference ?? '' },
            { header: 'Created', cell: (c) => formatTime(new Date(c.created_at)) },
          ],
        })
      : ''
  }
${
  orders.length > 0
    ? table({
        caption: 'eSIM orders with this reference',
        rows: orders,
        empty: '',
        columns: [
          { header: 'Order', cell: (o: OrderView) => objectLink(o.id) },
          { header: 'Status', cell: (o) => statusBadge(o.status) },
          { header: 'Price', cell: (o) => formatMoney(o.price, o.currency), numeric: true },
          { header: 'eSIM', cell: (o) => objectLink(o.esim_id) },
        ],
      })
    : ''
}`)
}

/** Search: an exact id of this organization and environment goes to its page; an email or reference lists what matches. */
export const searchPages: ConsolePage = {
  name: 'search',
  register(router) {
    router.get(SEARCH, 'organization', (ctx) => searchPage(ctx))
  },
}
