import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx, type Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import { requireCardOnClock, requireCardProgram } from '../cards/index.js'
import { emit } from '../events/index.js'
import { findProgram } from '../programs/index.js'
import { planTokenMove, type TokenOperation, type TokenStatus } from './lifecycle.js'
import { presentToken } from './present.js'
import * as repo from './repo.js'
import type { NetworkTokenView, SimulateNetworkTokenBody } from './schemas.js'
import { requireActiveCard, requireSimulatorFeed } from './simulator-feeds.js'

export { presentToken } from './present.js'
export { tokenUsable } from './lifecycle.js'

/** The caller's network token by id: another organization's token answers exactly like a missing one. */
export async function requireToken(db: Db, ctx: Scope, tokenId: string): Promise<repo.TokenRow> {
  const row = isId('ntok', tokenId) ? await repo.findToken(db, tokenId) : undefined
  return requireOwned(row, ctx, 'token_not_found')
}

/** `requireToken` with the sandbox clock of its card's cardholder: read in the token's statement, in the sandbox only. */
async function requireTokenOnClock(
  db: Db,
  ctx: Scope,
  tokenId: string,
): Promise<{ token: repo.TokenRow; clockId: string | null }> {
  if (ctx.environment !== 'sandbox')
    return { token: await requireToken(db, ctx, tokenId), clockId: null }
  const row = isId('ntok', tokenId) ? await repo.findTokenWithClock(db, tokenId) : undefined
  const { clock_id: clockId, ...token } = requireOwned(row, ctx, 'token_not_found')
  return { token, clockId }
}

/**
 * The status of network token `networkTokenId` when it belongs to card `cardId` of the caller, else null.
 * The authorization engine calls it inside its decision transaction to decline `token_inactive` through a
 * requested, suspended or deleted token.
 */
export async function tokenStatusForCard(
  trx: Db,
  ctx: Scope,
  networkTokenId: string,
  cardId: string,
): Promise<string | null> {
  if (!isId('ntok', networkTokenId)) return null
  return repo.tokenStatusFor(trx, {
    id: networkTokenId,
    cardId,
    organizationId: ctx.organizationId,
    environment: ctx.environment,
  })
}

/** The program behind the token in the path, for capability mounting; null unless the token is the caller's. */
export async function tokenProgramOf(
  deps: AppDeps,
  req: FastifyRequest,
): Promise<{ capabilities: readonly string[] } | null> {
  const id = (req.params as { network_token_id?: string }).network_token_id
  if (!req.ctx || !id || !isId('ntok', id)) return null
  const row = await repo.findToken(deps.db, id)
  if (
    !row ||
    row.organization_id !== req.ctx.organizationId ||
    row.environment !== req.ctx.environment
  )
    return null
  const program = await findProgram(deps.db, row.program_id)
  return program ? { capabilities: program.capabilities } : null
}

/** Emits `type` with the token's REST object, at `now`, naming the sandbox clock `clockId` when it is on one. */
function emitToken(
  trx: Db,
  type: 'network_token.created' | 'network_token.updated',
  row: repo.TokenRow,
  now: Date,
  clockId: string | null,
): Promise<unknown> {
  return emit(trx, { ...scopeOfRow(row), clockId }, type, presentToken(row), now)
}

/**
 * Sandbox: a wallet asks for a token of an active card. The token is written `requested`
 * (network_token.created) and, unless `activate` is false, the issuer approves it in the same transaction
 * (`active`, network_token.updated), so the answer is ready for tokenized authorizations. Under the card's sandbox
 * clock the token's times are the clock's and its events name the clock (docs/sandbox-clocks.md).
 */
export async function provisionToken(
  deps: AppDeps,
  ctx: RequestCtx,
  body: SimulateNetworkTokenBody,
): Promise<NetworkTokenView> {
  const on = await requireCardOnClock(deps, ctx, body.card_id, 'card_id')
  const { card, clockId } = on
  const program = await requireCardProgram(deps.db, card)
  requireSimulatorFeed(deps.processors, program, 'network_tokens')
  requireActiveCard(card, 'tokenized')
  const now = on.deps.clock.now()
  return withTx(deps.db, async (trx) => {
    let row = await repo.insertToken(trx, {
      id: newId('ntok'),
      organization_id: card.organization_id,
      environment: card.environment,
      card_id: card.id,
      program_id: card.program_id,
      wallet: body.wallet,
      status: 'requested',
      activated_at: null,
      deleted_at: null,
      created_at: now,
      updated_at: now,
    })
    await emitToken(trx, 'network_token.created', row, now, clockId)
    if (body.activate !== false) {
      row = await repo.updateToken(trx, row.id, {
        status: 'active',
        activated_at: now,
        updated_at: now,
      })
      await emitToken(trx, 'network_token.updated', row, now, clockId)
    }
    return presentToken(row)
  })
}

/**
 * Applies one move of the token state table under the token's row lock; emits network_token.updated. Under the
 * card's sandbox clock (read with the token, in the sandbox only) on the clock's time, the event naming the clock.
 */
export async function moveToken(
  deps: AppDeps,
  ctx: RequestCtx,
  tokenId: string,
  op: TokenOperation,
): Promise<NetworkTokenView> {
  const { token: current, clockId } = await requireTokenOnClock(deps.db, ctx, tokenId)
  const now = (await onClock(deps, clockId)).clock.now()
  return withTx(deps.db, async (trx) => {
    const locked = (await repo.lockToken(trx, current.id))!
    const move = planTokenMove(locked.status as TokenStatus, op)
    if (!move.ok) throw new ApiError(move.code, { message: move.message })
    const row = await repo.updateToken(trx, locked.id, {
      status: move.next,
      updated_at: now,
      ...(move.next === 'deleted' ? { deleted_at: now } : {}),
      ...(op === 'activate' ? { activated_at: now } : {}),
    })
    await emitToken(trx, 'network_token.updated', row, now, clockId)
    return presentToken(row)
  })
}

/**
 * A closed card takes its wallet tokens with it: inside the transaction that closes the card, every token of it
 * that is not deleted yet becomes `deleted` (terminal), each with network_token.updated (at the card's time `now`,
 * naming its sandbox clock `clockId` when it is on one).
 */
export async function deleteTokensOfClosedCard(
  trx: Db,
  card: { id: string; organization_id: string; environment: string },
  now: Date,
  clockId: string | null = null,
): Promise<void> {
  for (const row of await repo.deleteCardTokens(trx, card.id, now))
    await emitToken(trx, 'network_token.updated', row, now, clockId)
}

export async function retrieveToken(
  deps: AppDeps,
  ctx: RequestCtx,
  tokenId: string,
): Promise<NetworkTokenView> {
  return presentToken(await requireToken(deps.db, ctx, tokenId))
}

export interface TokenListFilter {
  card_id?: string
  status?: string
  wallet?: string
}

/** One page of the caller's network tokens, newest first. */
export async function listTokens(
  deps: AppDeps,
  ctx: RequestCtx,
  filter: TokenListFilter,
  page: PageParams,
): Promise<ListResult<NetworkTokenView>> {
  const where: repo.TokenFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    cardId: filter.card_id,
    status: filter.status,
    wallet: filter.wallet,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/network_tokens',
    page,
    sortKey: (r: repo.TokenRow) => r.id,
    fetch: (bounds) => repo.listTokens(deps.db, where, bounds),
    present: presentToken,
  })
}
