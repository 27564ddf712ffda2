import type { FastifyReply } from 'fastify'
import type { ApiError } from '../../../http/errors.js'
import {
  answerAuthentication,
  listAuthentications,
  retrieveAuthentication,
  simulateAuthentication,
  type AuthenticationView,
} from '../../authentications/index.js'
import {
  cursorPager,
  details,
  field,
  formatMoney,
  formatTime,
  getForm,
  postForm,
  selectField,
  table,
} from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { apiCtx, canChange, consoleAction, keyField } from './changes.js'
import { currencyCode, filterValue, minorAmount, pageOf, queryText } from './form-input.js'
import { apiView, eventsSection, objectLink, statusBadge } from './object-display.js'
import { errorInWords, invalidField } from './refusals.js'
import { refuseOutsideSandbox, sandboxSection } from './sandbox.js'

export const AUTHENTICATIONS = '/console/authentications'
/** 3-D Secure ships behind a release (SVC_RELEASES), as its API scopes do: without it the pages say so and change nothing. */
const RELEASE = 'three_d_secure'

function released(ctx: PageContext): boolean {
  return ctx.deps.config.releases.has(RELEASE)
}

function notReleased(ctx: PageContext): FastifyReply {
  return ctx.render(
    {
      title: '3-D Secure',
      body: html`<p>3-D Secure is not enabled on this deployment: its API (/v1/authentications) is not issued either. The platform operator enables it with <code>SVC_RELEASES=three_d_secure</code>.</p>`,
    },
    404,
  )
}
const STATUSES = ['pending', 'approved', 'declined', 'expired'] as const

interface ChallengeValues {
  card_id?: string
  amount?: string
  currency?: string
  merchant?: string
}

function merchantOf(a: AuthenticationView): string {
  const m = a.merchant as {
    name?: string | null
    city?: string | null
    country?: string | null
    mcc?: string | null
  } | null
  if (!m?.name) return 'unnamed merchant'
  return [m.name, m.city, m.country].filter(Boolean).join(', ') + (m.mcc ? ` (MCC ${m.mcc})` : '')
}

function challengeForm(ctx: PageContext, values: ChallengeValues = {}, error?: ApiError): Html {
  return sandboxSection(
    ctx,
    'challenge-h',
    'Start a 3-D Secure challenge',
    html`<p>What a merchant's checkout does: an out-of-band challenge on an active card, pending for five minutes until approved or declined.</p>
${error ? errorInWords(ctx, error) : ''}
${postForm(
  `${AUTHENTICATIONS}/simulate`,
  ctx.csrf,
  html`${keyField()}
${field({ name: 'card_id', id: 'challenge-card', label: 'Card id', value: values.card_id ?? '', required: true })}
${field({ name: 'amount', label: 'Amount', value: values.amount ?? '49.99', required: true, inputmode: 'decimal', hint: 'In the currency, e.g. 49.99' })}
${field({ name: 'currency', label: 'Currency', value: values.currency ?? 'USD', required: true, maxlength: 3 })}
${field({ name: 'merchant', label: 'Merchant name', value: values.merchant ?? 'Corner Books', maxlength: 200 })}
<button type="submit" class="primary">Start the challenge</button>`,
  { label: 'Start a 3-D Secure challenge' },
)}`,
  )
}

async function listPage(
  ctx: PageContext,
  challenge?: { values: ChallengeValues; error: ApiError },
  status = 200,
): Promise<FastifyReply> {
  const after = queryText(ctx, 'after')
  const page = pageOf(ctx)
  const filters = {
    card_id: filterValue(ctx, 'card_id', 'id'),
    status: filterValue(ctx, 'status', STATUSES),
  }
  const list = await listAuthentications(
    ctx.deps,
    apiCtx(ctx),
    { card_id: filters.card_id || undefined, status: filters.status || undefined },
    page,
  )
  return ctx.render(
    {
      title: '3-D Secure',
      body: html`<p class="muted">Challenges of online purchases (3-D Secure authentications), newest first. A pending one is approved or declined by the cardholder through you.</p>
${getForm(
  AUTHENTICATIONS,
  html`<div>${field({ name: 'card_id', id: 'filter-card', label: 'Card id', value: filters.card_id })}</div>
<div>${selectField('status', 'Status', [['', 'Any'], ...STATUSES.map((s): [string, string] => [s, s])], filters.status, { id: 'filter-status' })}</div>
<div><button type="submit" class="secondary">Filter</button></div>`,
  'Filter authentications',
)}
${table({
  caption: '3-D Secure authentications, newest first',
  rows: list.data,
  empty: 'No authentication matches.',
  columns: [
    { header: 'Authentication', cell: (a: AuthenticationView) => objectLink(a.id) },
    { header: 'Card', cell: (a) => objectLink(a.card_id) },
    { header: 'Amount', cell: (a) => formatMoney(a.amount, a.currency), numeric: true },
    { header: 'Merchant', cell: (a) => merchantOf(a) },
    { header: 'Status', cell: (a) => statusBadge(a.status) },
    { header: 'Created', cell: (a) => formatTime(new Date(a.created_at)) },
  ],
})}
${cursorPager(AUTHENTICATIONS, filters, list.has_more ? list.next_cursor : null, !after)}
${challengeForm(ctx, challenge?.values, challenge?.error)}`,
    },
    status,
  )
}

async function detailPage(
  ctx: PageContext,
  id: string,
  error?: ApiError,
  status = 200,
): Promise<FastifyReply> {
  const a = await retrieveAuthentication(ctx.deps, apiCtx(ctx), id)
  const answerable = a.status === 'pending' && canChange(ctx)
  return ctx.render(
    {
      title: `Authentication ${a.id}`,
      body: html`${error ? errorInWords(ctx, error) : ''}
${details([
  ['Status', statusBadge(a.status)],
  ['Card', objectLink(a.card_id)],
  ['Amount', formatMoney(a.amount, a.currency)],
  ['Merchant', merchantOf(a)],
  ['Challenge', 'out of band'],
  ['Expires', formatTime(new Date(a.expires_at))],
  ['Decided', a.decided_at ? formatTime(new Date(a.decided_at)) : 'not yet'],
  ['Created', formatTime(new Date(a.created_at))],
])}
${
  answerable
    ? html`<div class="actions">${postForm(`${AUTHENTICATIONS}/${a.id}/approve`, ctx.csrf, html`${keyField()}<button type="submit" class="primary">Approve</button>`, { class: 'inline', label: 'Approve the challenge' })}
${postForm(`${AUTHENTICATIONS}/${a.id}/decline`, ctx.csrf, html`${keyField()}<button type="submit" class="danger">Decline</button>`, { class: 'inline', label: 'Decline the challenge' })}</div>`
    : ''
}
${await eventsSection(ctx, a.id, a.created_at)}
${apiView(a)}
<p><a href="${AUTHENTICATIONS}">All authentications</a></p>`,
    },
    status,
  )
}

/** 3-D Secure: the list (card, status filters), one authentication with approve/decline while pending, and the sandbox's checkout challenge. */
export const authenticationPages: ConsolePage = {
  name: 'authentications',
  register(router) {
    router.get(AUTHENTICATIONS, 'organization', (ctx) =>
      released(ctx) ? listPage(ctx) : notReleased(ctx),
    )
    router.get(`${AUTHENTICATIONS}/:id`, 'organization', (ctx) =>
      released(ctx) ? detailPage(ctx, (ctx.req.params as { id: string }).id) : notReleased(ctx),
    )

    router.post(`${AUTHENTICATIONS}/simulate`, 'organization', async (ctx) => {
      if (!released(ctx)) return notReleased(ctx)
      refuseOutsideSandbox(ctx)
      const values: ChallengeValues = {
        card_id: ctx.text('card_id').trim(),
        amount: ctx.text('amount'),
        currency: ctx.text('currency'),
        merchant: ctx.text('merchant').trim(),
      }
      const refuse = (error: ApiError) => listPage(ctx, { values, error }, error.status)
      const currency = currencyCode(values.currency ?? '')
      if (!currency)
        return refuse(invalidField('currency', 'Give a three-letter currency code, such as USD.'))
      const amount = minorAmount(values.amount ?? '', currency)
      if (Number.isNaN(amount))
        return refuse(
          invalidField(
            'amount',
            `Give a positive amount in ${currency}, such as ${currency === 'JPY' ? '1250' : '12.50'}.`,
          ),
        )
      if ((values.merchant ?? '').length > 200)
        return refuse(invalidField('merchant', 'A merchant name has at most 200 characters.'))
      return consoleAction(
        ctx,
        'authentication.simulated',
        async (unit) => {
          const a = await simulateAuthentication(unit, apiCtx(ctx), {
            card_id: values.card_id ?? '',
            amount,
            currency,
            ...(values.merchant ? { merchant: { name: values.merchant } } : {}),
          })
          return {
            to: `${AUTHENTICATIONS}/${a.id}`,
            text: `Challenge ${a.id} started: ${formatMoney(a.amount, a.currency)}, pending.`,
            objectId: a.id,
          }
        },
        refuse,
      )
    })

    for (const [op, answer] of [
      ['approve', 'approved'],
      ['decline', 'declined'],
    ] as const) {
      router.post(`${AUTHENTICATIONS}/:id/${op}`, 'organization', async (ctx) => {
        if (!released(ctx)) return notReleased(ctx)
        const id = (ctx.req.params as { id: string }).id
        return consoleAction(
          ctx,
          `authentication.${answer}`,
          async (unit) => {
            const a = await answerAuthentication(unit, apiCtx(ctx), id, answer)
            return {
              to: `${AUTHENTICATIONS}/${a.id}`,
              text: `The challenge is ${a.status}.`,
              objectId: a.id,
            }
          },
          (error) => detailPage(ctx, id, error, error.status),
        )
      })
    }
  },
}
