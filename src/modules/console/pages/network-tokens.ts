import type { FastifyReply } from 'fastify'
import type { ApiError } from '../../../http/errors.js'
import {
  listTokens,
  moveToken,
  provisionToken,
  retrieveToken,
  type NetworkTokenView,
} from '../../network-tokens/index.js'
import {
  cursorPager,
  details,
  field,
  formatTime,
  getForm,
  postForm,
  selectField,
  table,
} from '../components.js'
import { html, type Html } from '../../../lib/html.js'
import type { ConsolePage, PageContext } from '../router.js'
import { apiCtx, canChange, consoleAction, keyField } from './changes.js'
import { filterValue, pageOf, queryText } from './form-input.js'
import { apiView, eventsSection, objectLink, statusBadge } from './object-display.js'
import { errorInWords } from './refusals.js'
import { refuseOutsideSandbox, sandboxSection } from './sandbox.js'

export const NETWORK_TOKENS = '/console/network-tokens'
const STATUSES = ['requested', 'active', 'suspended', 'deleted'] as const
const WALLETS = ['apple_pay', 'google_pay', 'samsung_pay'] as const
const WALLET_LABEL: Record<string, string> = {
  apple_pay: 'Apple Pay',
  google_pay: 'Google Pay',
  samsung_pay: 'Samsung Pay',
}
const MOVES = { suspend: 'Suspend', resume: 'Resume', delete: 'Delete' } as const
type Move = keyof typeof MOVES
/** The moves each status allows (the service refuses the others with token_invalid_state or token_deleted). */
const MOVES_FROM: Record<string, Move[]> = {
  requested: ['delete'],
  active: ['suspend', 'delete'],
  suspended: ['resume', 'delete'],
  deleted: [],
}

function provisionForm(
  ctx: PageContext,
  values: { card_id?: string; wallet?: string } = {},
  error?: ApiError,
): Html {
  return sandboxSection(
    ctx,
    'provision-h',
    'Provision a token',
    html`<p>What a wallet does when a cardholder adds the card: the token is requested, then approved at once.</p>
${error ? errorInWords(ctx, error) : ''}
${postForm(
  `${NETWORK_TOKENS}/provision`,
  ctx.csrf,
  html`${keyField()}
${field({ name: 'card_id', label: 'Card id', value: values.card_id ?? '', required: true, hint: 'An active card (card_…) of a program whose processor simulates wallets.' })}
${selectField(
  'wallet',
  'Wallet',
  WALLETS.map((w): [string, string] => [w, WALLET_LABEL[w]]),
  values.wallet ?? 'apple_pay',
  { id: 'provision-wallet' },
)}
<button type="submit" class="primary">Provision</button>`,
  { label: 'Provision a network token' },
)}`,
  )
}

async function listPage(
  ctx: PageContext,
  provision?: { values: { card_id?: string; wallet?: string }; error: ApiError },
  status = 200,
): Promise<FastifyReply> {
  const after = queryText(ctx, 'after')
  const page = pageOf(ctx)
  const filters = {
    card_id: filterValue(ctx, 'card_id', 'id'),
    status: filterValue(ctx, 'status', STATUSES),
    wallet: filterValue(ctx, 'wallet', WALLETS),
  }
  const tokens = await listTokens(
    ctx.deps,
    apiCtx(ctx),
    {
      card_id: filters.card_id || undefined,
      status: filters.status || undefined,
      wallet: filters.wallet || undefined,
    },
    page,
  )
  return ctx.render(
    {
      title: 'Network tokens',
      body: html`<p class="muted">Cards added to wallets (Apple Pay, Google Pay, Samsung Pay), newest first. The token number never leaves the network.</p>
${getForm(
  NETWORK_TOKENS,
  html`<div>${field({ name: 'card_id', id: 'filter-card', label: 'Card id', value: filters.card_id })}</div>
<div>${selectField('status', 'Status', [['', 'Any'], ...STATUSES.map((s): [string, string] => [s, s])], filters.status, { id: 'filter-status' })}</div>
<div>${selectField('wallet', 'Wallet', [['', 'Any'], ...WALLETS.map((w): [string, string] => [w, WALLET_LABEL[w]])], filters.wallet, { id: 'filter-wallet' })}</div>
<div><button type="submit" class="secondary">Filter</button></div>`,
  'Filter network tokens',
)}
${table({
  caption: 'Network tokens, newest first',
  rows: tokens.data,
  empty: 'No network token matches.',
  columns: [
    { header: 'Token', cell: (t: NetworkTokenView) => objectLink(t.id) },
    { header: 'Card', cell: (t) => objectLink(t.card_id) },
    { header: 'Wallet', cell: (t) => WALLET_LABEL[t.wallet] ?? t.wallet },
    { header: 'Status', cell: (t) => statusBadge(t.status) },
    { header: 'Created', cell: (t) => formatTime(new Date(t.created_at)) },
  ],
})}
${cursorPager(NETWORK_TOKENS, filters, tokens.has_more ? tokens.next_cursor : null, !after)}
${provisionForm(ctx, provision?.values, provision?.error)}`,
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
  const token = await retrieveToken(ctx.deps, apiCtx(ctx), id)
  const moves = canChange(ctx) ? (MOVES_FROM[token.status] ?? []) : []
  return ctx.render(
    {
      title: `Network token ${token.id}`,
      body: html`${error ? errorInWords(ctx, error) : ''}
${details([
  ['Status', statusBadge(token.status)],
  ['Card', objectLink(token.card_id)],
  ['Wallet', WALLET_LABEL[token.wallet] ?? token.wallet],
  ['Activated', token.activated_at ? formatTime(new Date(token.activated_at)) : 'not yet'],
  ['Deleted', token.deleted_at ? formatTime(new Date(token.deleted_at)) : 'no'],
  ['Created', formatTime(new Date(token.created_at))],
  ['Updated', formatTime(new Date(token.updated_at))],
])}
${
  moves.length > 0
    ? html`<div class="actions">${moves.map((m) =>
        postForm(
          `${NETWORK_TOKENS}/${token.id}/${m}`,
          ctx.csrf,
          html`${keyField()}<button type="submit" class="${m === 'delete' ? 'danger' : 'secondary'}">${MOVES[m]}</button>`,
          { class: 'inline', label: `${MOVES[m]} the token` },
        ),
      )}</div>
${moves.includes('delete') ? html`<p class="hint">Deleting is permanent: the wallet loses the card.</p>` : ''}`
    : ''
}
${await eventsSection(ctx, token.id, token.created_at)}
${apiView(token)}
<p><a href="${NETWORK_TOKENS}">All network tokens</a></p>`,
    },
    status,
  )
}

/** Network tokens: the list (card, status, wallet filters), one token with suspend/resume/delete, and the sandbox's wallet provisioning. */
export const networkTokenPages: ConsolePage = {
  name: 'network-tokens',
  register(router) {
    router.get(NETWORK_TOKENS, 'organization', (ctx) => listPage(ctx))
    router.get(`${NETWORK_TOKENS}/:id`, 'organization', (ctx) =>
      detailPage(ctx, (ctx.req.params as { id: string }).id),
    )

    router.post(`${NETWORK_TOKENS}/provision`, 'organization', async (ctx) => {
      refuseOutsideSandbox(ctx)
      const values = { card_id: ctx.text('card_id').trim(), wallet: ctx.text('wallet') }
      const wallet = (WALLETS as readonly string[]).includes(values.wallet)
        ? (values.wallet as (typeof WALLETS)[number])
        : 'apple_pay'
      return consoleAction(
        ctx,
        'network_token.provisioned',
        async (unit) => {
          const token = await provisionToken(unit, apiCtx(ctx), {
            card_id: values.card_id,
            wallet,
          } as Parameters<typeof provisionToken>[2])
          return {
            to: `${NETWORK_TOKENS}/${token.id}`,
            text: `Token ${token.id} provisioned in ${WALLET_LABEL[wallet]}: ${token.status}.`,
            objectId: token.id,
          }
        },
        (error) => listPage(ctx, { values, error }, error.status),
      )
    })

    for (const move of Object.keys(MOVES) as Move[]) {
      router.post(`${NETWORK_TOKENS}/:id/${move}`, 'organization', async (ctx) => {
        const id = (ctx.req.params as { id: string }).id
        return consoleAction(
          ctx,
          `network_token.${move === 'delete' ? 'deleted' : move === 'suspend' ? 'suspended' : 'resumed'}`,
          async (unit) => {
            const token = await moveToken(unit, apiCtx(ctx), id, move)
            return {
              to: `${NETWORK_TOKENS}/${token.id}`,
              text: `The token is ${token.status} now.`,
              objectId: token.id,
            }
          },
          (error) => detailPage(ctx, id, error, error.status),
        )
      })
    }
  },
}
