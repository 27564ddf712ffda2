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
import { accountsWithIdPrefix } from '../../accounts/index.js'
import { authorizationsWithIdPrefix } from '../../authorizations/index.js'
import {
  cardholdersWithIdPrefix,
  searchCardholders,
  searchCardholdersByName,
  type CardholderView,
} from '../../cardholders/index.js'
import { cardsEndingIn, cardsWithIdPrefix, type CardMatch } from '../../cards/index.js'
import { transactionsWithIdPrefix } from '../../transactions/index.js'
import { ID_OR_PREFIX } from '../../../lib/id-prefix.js'
import { requireDispute } from '../../disputes/index.js'
import {
  esimsByIccid,
  esimsWithIdPrefix,
  listOrders,
  ordersWithIdPrefix,
  retrieveEsim,
  retrieveOrder,
  type EsimMatch,
  type OrderView,
} from '../../esim/index.js'
import { eventsWithIdPrefix, findEvent } from '../../events/index.js'
import { retrieveToken } from '../../network-tokens/index.js'
import { retrieveReport } from '../../reports/index.js'
import { formatMoney, table } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { apiCtx } from './changes.js'
import { objectHref, objectLink } from './object-display.js'

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

/** Kinds whose ids a prefix finds: each owner's read of its ids in a range of its scope's index. */
const PREFIX_FINDERS: Partial<
  Record<string, (deps: AppDeps, ctx: RequestCtx, prefix: string) => Promise<Match[]>>
> = {
  chd: async (deps, ctx, p) => (await cardholdersWithIdPrefix(deps, ctx, p)).map(cardholderMatch),
  acct: async (deps, ctx, p) =>
    (await accountsWithIdPrefix(deps, ctx, p)).map((id) => ({ kind: 'Account', id, label: '' })),
  card: async (deps, ctx, p) => (await cardsWithIdPrefix(deps, ctx, p)).map(cardMatch),
  auth: async (deps, ctx, p) =>
    (await authorizationsWithIdPrefix(deps, ctx, p)).map((id) => ({
      kind: 'Authorization',
      id,
      label: '',
    })),
  txn: async (deps, ctx, p) =>
    (await transactionsWithIdPrefix(deps, ctx, p)).map((id) => ({
      kind: 'Transaction',
      id,
      label: '',
    })),
  esord: async (deps, ctx, p) =>
    (await ordersWithIdPrefix(deps, ctx, p)).map((id) => ({ kind: 'eSIM order', id, label: '' })),
  esim: async (deps, ctx, p) => (await esimsWithIdPrefix(deps, ctx, p)).map(esimMatch),
  evt: async (deps, ctx, p) =>
    (await eventsWithIdPrefix(deps, ctx, p)).map((id) => ({ kind: 'Event', id, label: '' })),
}

/** One thing the search found: what kind it is, the words that name it, and its id (linked to its page). */
interface Match {
  kind: string
  id: string
  label: string
}

function cardholderName(c: {
  first_name?: string | null
  last_name?: string | null
  name?: string | null
}): string {
  return [c.first_name, c.last_name].filter(Boolean).join(' ') || c.name || ''
}

function cardholderMatch(c: CardholderView): Match {
  const name = cardholderName(c as never)
  return { kind: 'Cardholder', id: c.id, label: [name, c.email].filter(Boolean).join(' · ') }
}

function cardMatch(c: CardMatch): Match {
  const brand = c.brand.charAt(0).toUpperCase() + c.brand.slice(1)
  return { kind: 'Card', id: c.id, label: `${brand} •••• ${c.last4 ?? '····'} · ${c.status}` }
}

function esimMatch(e: EsimMatch): Match {
  return { kind: 'eSIM', id: e.id, label: `ICCID ${e.iccid} · ${e.status}` }
}

function searchBox(q: string): Html {
  return html`<form method="get" action="${SEARCH}" class="filters" role="search" aria-label="Search objects"><div><label for="search-page-q">Id, email, name, last4, ICCID or reference</label>
<input id="search-page-q" name="q" type="text" value="${q}" required maxlength="254" autocomplete="off" spellcheck="false"></div>
<div><button type="submit" class="primary">Search</button></div></form>`
}

function matchesTable(caption: string, matches: Match[]): Html {
  return table({
    caption,
    rows: matches,
    empty: '',
    columns: [
      { header: 'Kind', cell: (m: Match) => m.kind },
      { header: 'Name', cell: (m) => m.label },
      { header: 'Id', cell: (m) => objectLink(m.id) },
    ],
  })
}

/** Every object of this scope an id or the start of one names; an exact id of a kind without a prefix read is looked up alone. */
async function idMatches(ctx: PageContext, rctx: RequestCtx, q: string): Promise<Match[]> {
  const kind = q.slice(0, q.indexOf('_'))
  const byPrefix = PREFIX_FINDERS[kind]
  if (byPrefix) return byPrefix(ctx.deps, rctx, q)
  const finder = FINDERS[kind]
  if (finder && ID.test(q) && (await finder(ctx.deps, rctx, q)))
    return [{ kind: KIND_NAMES[kind] ?? kind, id: q, label: '' }]
  return []
}

const ID = /^([a-z0-9]+)_[0-9A-Za-z]{10,40}$/

const KIND_NAMES: Record<string, string> = {
  dsp: 'Dispute',
  ntok: 'Network token',
  tdsa: '3-D Secure authentication',
  rpt: 'Report',
}

/** Everything an email, a reference, a name, four digits (a card's last4) or an ICCID names in this scope. */
async function textMatches(ctx: PageContext, rctx: RequestCtx, q: string): Promise<Match[]> {
  const digits = /^\d+$/.test(q)
  const [byEmail, byName, cards, esims, orders] = await Promise.all([
    searchCardholders(ctx.deps, rctx, q),
    digits || q.includes('@') ? [] : searchCardholdersByName(ctx.deps, rctx, q),
    digits && q.length === 4 ? cardsEndingIn(ctx.deps, rctx, q) : [],
    digits ? esimsByIccid(ctx.deps, rctx, q) : [],
    q.length <= 128
      ? listOrders(ctx.deps, rctx, { reference: q, limit: 20 }).then((p) => p.data)
      : ([] as OrderView[]),
  ])
  const seen = new Set<string>()
  const holders = [...byEmail, ...byName].filter((c) => !seen.has(c.id) && seen.add(c.id))
  return [
    ...holders.map(cardholderMatch),
    ...cards.map(cardMatch),
    ...esims.map(esimMatch),
    ...orders.map((o) => ({
      kind: 'eSIM order',
      id: o.id,
      label: `${o.reference} · ${o.status} · ${formatMoney(o.price, o.currency)}`,
    })),
  ]
}

async function searchPage(ctx: PageContext): Promise<FastifyReply> {
  const raw = (ctx.req.query as Record<string, unknown>).q
  const q = typeof raw === 'string' ? raw.trim().slice(0, 254) : ''
  const render = (body: Html, status = 200) =>
    ctx.render({ title: 'Search', body: html`${searchBox(q)}${body}` }, status)
  if (q === '')
    return render(
      html`<p class="muted">Search by any object id or the start of one (chd_, acct_, card_, auth_, txn_, dsp_, ntok_, tdsa_, esord_, esim_, rpt_, evt_…), a cardholder's email, name or reference, a card's last 4 digits, an ICCID (or its last digits) or an eSIM order's reference.</p>`,
    )
  const rctx = apiCtx(ctx)
  const id = ID_OR_PREFIX.exec(q)
  if (id) {
    const prefix = id[1]
    const matches = await idMatches(ctx, rctx, q)
    if (matches.length === 1) return ctx.redirect(objectHref(matches[0].id)!)
    if (matches.length > 1)
      return render(matchesTable(`${matches.length} objects whose id starts with ${q}`, matches))
    const known = PREFIX_FINDERS[prefix] ?? FINDERS[prefix]
    const other = ELSEWHERE[prefix]
    const where = rctx.environment === 'sandbox' ? 'the sandbox' : 'production'
    return render(
      html`<div class="flash error" role="alert"><p>Not found: no object <code>${q}</code> in ${where} of your organization.</p></div>
${known ? html`<p class="muted">An id of the other environment is found after switching environments.</p>` : other ? html`<p class="muted">${other}</p>` : html`<p class="muted">This is not a kind of id the console knows.</p>`}`,
      404,
    )
  }
  const matches = await textMatches(ctx, rctx, q)
  if (matches.length === 0) {
    return render(
      html`<div class="flash error" role="alert"><p>Not found: no cardholder has the email, name or reference “${q}”, no card ends in it, no eSIM has it as ICCID and no eSIM order has it as reference.</p></div>`,
      404,
    )
  }
  return render(
    matchesTable(
      `${matches.length === 1 ? 'One match' : `${matches.length} matches`} for “${q}”`,
      matches,
    ),
  )
}

/** Search: an id, or the start of one naming one object, goes to its page; anything else lists every match. */
export const searchPages: ConsolePage = {
  name: 'search',
  register(router) {
    router.get(SEARCH, 'organization', (ctx) => searchPage(ctx))
  },
}
