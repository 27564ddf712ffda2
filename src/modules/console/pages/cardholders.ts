import type { FastifyReply } from 'fastify'
import { listAccounts } from '../../accounts/index.js'
import { listCards } from '../../cards/index.js'
import {
  CardholderCreateRequest,
  createCardholder,
  IDENTITY_DOCUMENT_TYPES,
  KYC_STATUSES,
  listCardholders,
  retrieveCardholder,
  type CardholderView,
} from '../../cardholders/index.js'
import {
  ATTESTATION_STATUSES,
  KYC_METHODS,
  KycAttestationRequest,
  listAttestations,
  recordAttestation,
} from '../../kyc/index.js'
import { retrieveClock } from '../../clocks/index.js'
import { listPrograms } from '../../programs/index.js'
import { cursorPager, details, field, getForm, selectField, table } from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { act, actionForm, apiCtx, canChange, doneText } from './changes.js'
import { optional, pageOf, pathParam, queryText } from './form-input.js'
import {
  cardsTable,
  eventsSection,
  money,
  objectLink,
  statusBadge,
  when,
} from './object-display.js'
import { orProblem, problemBox, type Problem } from './refusals.js'
import { sandboxOnly, sandboxPanel } from './sandbox.js'
import { clockLabel } from './sandbox-clocks.js'

export const CARDHOLDERS = '/console/cardholders'

const KYC_WORDS: Record<string, string> = {
  not_started: 'not started',
  pending: 'pending',
  approved: 'approved',
  rejected: 'rejected',
  expired: 'expired',
}

function name(c: CardholderView): string {
  return `${c.first_name} ${c.last_name}`
}

interface CreateForm {
  document_type?: string
  document_number?: string
  first_name?: string
  last_name?: string
  email?: string
  phone_number?: string
  reference?: string
  line1?: string
  city?: string
  postal_code?: string
  country?: string
}

function createSection(ctx: PageContext, form: CreateForm = {}, problem?: Problem): Html {
  if (!canChange(ctx)) return html``
  return html`<section class="card" aria-labelledby="new-chd-h"><h2 id="new-chd-h">Create a cardholder</h2>${problemBox(problem)}
${actionForm(
  ctx,
  CARDHOLDERS,
  'Create a cardholder',
  'Create cardholder',
  html`<div class="grid2"><div>${field({ name: 'first_name', label: 'First name', value: form.first_name, required: true, maxlength: 100, autocomplete: 'off' })}</div>
<div>${field({ name: 'last_name', label: 'Last name', value: form.last_name, required: true, maxlength: 100, autocomplete: 'off' })}</div></div>
${field({ name: 'email', label: 'Email', type: 'email', value: form.email, required: true, maxlength: 254, autocomplete: 'off' })}
${field({ name: 'phone_number', label: 'Phone number (optional)', value: form.phone_number, hint: 'E.164, like +14155550123.', autocomplete: 'off' })}
${field({ name: 'reference', label: 'Your reference (optional)', value: form.reference, maxlength: 128 })}
<fieldset class="checks"><legend>Identity document (optional; cards need one)</legend>
${selectField(
  'document_type',
  'Document type',
  IDENTITY_DOCUMENT_TYPES.map((d): [string, string] => [d, d.replace(/_/g, ' ')]),
  form.document_type ?? 'passport',
)}
${field({ name: 'document_number', label: 'Document number', hint: 'Held encrypted, never shown again.', maxlength: 64, autocomplete: 'off' })}</fieldset>
<fieldset class="checks"><legend>Address (optional; cards need one to be delivered)</legend>
${field({ name: 'line1', label: 'Street and number', value: form.line1, maxlength: 200 })}
${field({ name: 'city', label: 'City', value: form.city, maxlength: 100 })}
<div class="grid2"><div>${field({ name: 'postal_code', label: 'Postal code', value: form.postal_code, maxlength: 20 })}</div>
<div>${field({ name: 'country', label: 'Country', value: form.country, hint: 'Three letters (ISO 3166-1), like USA.', maxlength: 3 })}</div></div></fieldset>`,
  'primary',
)}</section>`
}

async function listPage(
  ctx: PageContext,
  form?: CreateForm,
  problem?: Problem,
  status = 200,
): Promise<FastifyReply> {
  const filters = {
    kyc_status: queryText(ctx, 'kyc_status'),
    reference: queryText(ctx, 'reference'),
  }
  const page = await orProblem(ctx, 'Cardholders', () =>
    listCardholders(ctx.deps, apiCtx(ctx), {
      ...pageOf(ctx),
      ...((KYC_STATUSES as readonly string[]).includes(filters.kyc_status)
        ? { kyc_status: filters.kyc_status as CardholderView['kyc_status'] }
        : {}),
      ...(filters.reference ? { reference: filters.reference } : {}),
    }),
  )
  if ('sent' in page) return page.sent
  return ctx.render(
    {
      title: 'Cardholders',
      body: html`${getForm(
        CARDHOLDERS,
        html`<div>${selectField('kyc_status', 'KYC status', [['', 'Any'], ...KYC_STATUSES.map((s): [string, string] => [s, KYC_WORDS[s]])], filters.kyc_status)}</div>
<div>${field({ name: 'reference', label: 'Reference', value: filters.reference })}</div><div><button type="submit" class="secondary">Filter</button></div>`,
        'Filter cardholders',
      )}
${table({
  caption: 'Cardholders, newest first',
  rows: page.data,
  empty: 'No cardholders match.',
  columns: [
    { header: 'Name', cell: (c) => objectLink(c.id, name(c)) },
    { header: 'Email', cell: (c) => c.email },
    { header: 'KYC', cell: (c) => statusBadge(c.kyc_status) },
    { header: 'Reference', cell: (c) => c.reference ?? '' },
    { header: 'Created', cell: (c) => when(c.created_at) },
  ],
})}${cursorPager(CARDHOLDERS, filters, page.next_cursor, !queryText(ctx, 'after'))}
${createSection(ctx, form, problem)}`,
    },
    status,
  )
}

async function detailPage(
  ctx: PageContext,
  id: string,
  problem?: Problem,
  status = 200,
): Promise<FastifyReply> {
  const api = apiCtx(ctx)
  const read = await orProblem(ctx, 'Cardholder', async () => {
    const cardholder = await retrieveCardholder(ctx.deps, api, id)
    const [attestations, accounts, cards, programs] = await Promise.all([
      listAttestations(ctx.deps, api, id, { limit: 25 }),
      listAccounts(ctx.deps, api, { cardholder_id: id, limit: 100 }),
      listCards(ctx.deps, api, '/v1/cards', { cardholder_id: id }, { limit: 100 }),
      listPrograms(ctx.deps, api, { limit: 100 }),
    ])
    const clock = cardholder.clock_id
      ? await retrieveClock(ctx.deps, api, cardholder.clock_id).catch(() => null)
      : null
    return { cardholder, attestations, accounts, cards, programs, clock }
  })
  if ('sent' in read) return read.sent
  const { cardholder: c, attestations, accounts, cards, programs, clock } = read
  const address = c.address
    ? `${c.address.line1}${c.address.line2 ? `, ${c.address.line2}` : ''}, ${c.address.postal_code} ${c.address.city}${c.address.state ? `, ${c.address.state}` : ''}, ${c.address.country}`
    : null
  const currencies = [...new Set(programs.data.flatMap((p) => p.currencies))]
  const openAccount =
    canChange(ctx) && programs.data.length > 0
      ? html`<section class="card" aria-labelledby="open-acct-h"><h2 id="open-acct-h">Open an account</h2>
<p class="muted">The cardholder's KYC must be approved first.</p>
${actionForm(
  ctx,
  '/console/accounts',
  'Open an account',
  'Open account',
  html`<input type="hidden" name="cardholder_id" value="${c.id}">
${selectField(
  'program_id',
  'Program',
  programs.data.map((p): [string, string] => [p.id, `${p.name} (${p.currencies.join(', ')})`]),
  programs.data[0]?.id,
  { id: 'open-program' },
)}
${selectField(
  'currency',
  'Currency',
  currencies.map((x): [string, string] => [x, x]),
  currencies[0],
  { id: 'open-currency' },
)}`,
  'primary',
)}</section>`
      : html``
  const kycTool = sandboxPanel(
    ctx,
    'Report a KYC outcome',
    html`<p class="muted">Records a verification as your backend would (POST /v1/cardholders/{id}/kyc): no document is uploaded here.</p>
${actionForm(
  ctx,
  `${CARDHOLDERS}/${c.id}/kyc`,
  'Report a KYC outcome',
  'Report KYC outcome',
  html`${selectField(
    'status',
    'Outcome',
    ATTESTATION_STATUSES.map((s): [string, string] => [s, s]),
    'approved',
    { id: 'kyc-status' },
  )}
${field({ name: 'provider', id: 'kyc-provider', label: 'Provider', value: 'Sandbox KYC', required: true, maxlength: 255 })}
${selectField(
  'method',
  'Method',
  KYC_METHODS.map((m): [string, string] => [m, m]),
  'document',
  { id: 'kyc-method' },
)}
${field({ name: 'legal_name', id: 'kyc-legal-name', label: 'Legal name', value: name(c), maxlength: 200, hint: 'Sent as the identity; processors that run their own checks need it.' })}`,
  'primary',
)}`,
  )
  return ctx.render(
    {
      title: name(c),
      body: html`${problemBox(problem)}${details([
        ['Cardholder', html`<code>${c.id}</code>`],
        ['KYC status', statusBadge(c.kyc_status)],
        ['Email', c.email],
        ['Phone', c.phone_number],
        ['Address', address],
        ['Identity document', c.has_identity_document ? 'held (never shown)' : 'none'],
        ['Reference', c.reference],
        ...(c.clock_id
          ? [
              ['Clock', clock ? clockLabel(clock) : html`<code>${c.clock_id}</code>`] as [
                string,
                Html,
              ],
            ]
          : []),
        ['Created', when(c.created_at)],
      ])}
<h2>KYC attestations</h2>${table({
        caption: 'KYC attestations, newest first (the first is the current one)',
        rows: attestations.data,
        empty: 'No KYC outcome reported yet.',
        columns: [
          { header: 'Outcome', cell: (a) => statusBadge(a.status) },
          { header: 'Provider', cell: (a) => a.provider },
          { header: 'Method', cell: (a) => a.method ?? '' },
          { header: 'Verified', cell: (a) => when(a.verified_at) },
          { header: 'Expires', cell: (a) => when(a.expires_at) },
          {
            header: 'Documents',
            cell: (a) =>
              a.documents.length === 0
                ? html`<span class="muted">none</span>`
                : html`<ul>${a.documents.map((d) => html`<li>${d.kind}: ${d.file_name} (${d.content_type}, ${d.size_bytes} bytes)</li>`)}</ul>`,
          },
        ],
      })}
${kycTool}
<h2>Accounts</h2>${table({
        caption: "The cardholder's accounts",
        rows: accounts.data,
        empty: 'No account yet.',
        columns: [
          { header: 'Account', cell: (a) => objectLink(a.id) },
          { header: 'Status', cell: (a) => statusBadge(a.status) },
          {
            header: 'Available',
            numeric: true,
            cell: (a) => money(a.available_balance, a.currency),
          },
        ],
      })}
${openAccount}
<h2>Cards</h2>${cardsTable("The cardholder's cards", cards.data, true)}
${await eventsSection(ctx, c.id, c.created_at)}`,
    },
    status,
  )
}

function createForm(ctx: PageContext): CreateForm {
  const f: CreateForm = {}
  for (const k of [
    'document_type',
    'first_name',
    'last_name',
    'email',
    'phone_number',
    'reference',
    'line1',
    'city',
    'postal_code',
    'country',
  ] as const)
    f[k] = ctx.text(k)
  return f
}

/** Cardholders: the list (KYC status and reference filters), one cardholder with its attestations, accounts and cards; create, report KYC (sandbox). */
export const cardholderPages: ConsolePage = {
  name: 'cardholders',
  register(router) {
    router.get(CARDHOLDERS, 'organization', (ctx) => listPage(ctx))
    router.get(`${CARDHOLDERS}/:id`, 'organization', (ctx) => detailPage(ctx, pathParam(ctx, 'id')))

    router.post(CARDHOLDERS, 'organization', async (ctx) => {
      const form = createForm(ctx)
      const hasAddress = [form.line1, form.city, form.postal_code, form.country].some((v) => v)
      const outcome = await act(ctx, {
        method: 'POST',
        path: '/v1/cardholders',
        status: 201,
        schema: CardholderCreateRequest,
        action: 'cardholder.created',
        body: {
          type: 'individual',
          first_name: ctx.text('first_name'),
          last_name: ctx.text('last_name'),
          email: ctx.text('email'),
          ...(optional(ctx, 'phone_number') ? { phone_number: optional(ctx, 'phone_number') } : {}),
          ...(optional(ctx, 'reference') ? { reference: optional(ctx, 'reference') } : {}),
          ...(optional(ctx, 'document_number')
            ? {
                identity_document: {
                  type: ctx.text('document_type'),
                  number: optional(ctx, 'document_number'),
                },
              }
            : {}),
          ...(hasAddress
            ? {
                address: {
                  line1: form.line1,
                  city: form.city,
                  postal_code: form.postal_code,
                  country: (form.country ?? '').toUpperCase(),
                },
              }
            : {}),
        },
        run: (body, unit) => createCardholder(unit, apiCtx(ctx), body),
      })
      if (!outcome.ok) return listPage(ctx, form, outcome.problem, outcome.status)
      const c = outcome.object as CardholderView
      return ctx.redirect(`${CARDHOLDERS}/${c.id}`, {
        kind: 'ok',
        text: doneText(outcome, `Cardholder ${name(c)} created.`),
      })
    })

    router.post(`${CARDHOLDERS}/:id/kyc`, 'organization', async (ctx) => {
      const refused = sandboxOnly(ctx)
      if (refused) return refused
      const id = pathParam(ctx, 'id')
      const legalName = optional(ctx, 'legal_name')
      const outcome = await act(ctx, {
        method: 'POST',
        path: `/v1/cardholders/${id}/kyc`,
        status: 201,
        schema: KycAttestationRequest,
        action: 'kyc.reported',
        body: {
          status: ctx.text('status'),
          provider: ctx.text('provider'),
          method: ctx.text('method'),
          verified_at: new Date(ctx.deps.clock.now().getTime() - 1000).toISOString(),
          ...(legalName ? { identity: { legal_name: legalName } } : {}),
        },
        run: (body, unit) => recordAttestation(unit, apiCtx(ctx), id, body),
      })
      if (!outcome.ok) return detailPage(ctx, id, outcome.problem, outcome.status)
      return ctx.redirect(`${CARDHOLDERS}/${id}`, {
        kind: 'ok',
        text: doneText(
          outcome,
          `KYC outcome recorded: ${(outcome.object as { status: string }).status}.`,
        ),
      })
    })
  },
}
