import type { FastifyRequest } from 'fastify'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import { json, type Db } from '../../db/types.js'
import { scopeOfRow, type RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { enqueue, type JobOutcome, type JobRecord } from '../../jobs/queue.js'
import type { JobType } from '../../jobs/types.js'
import { isId, newId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import { requireCard, requireCardProgram } from '../cards/index.js'
import { emit } from '../events/index.js'
import { requireActiveCard, requireSimulatorFeed } from '../network-tokens/index.js'
import { findProgram } from '../programs/index.js'
import { presentAuthentication } from './present.js'
import * as repo from './repo.js'
import type { AuthenticationView, SimulateAuthenticationBody } from './schemas.js'

/** How long a challenge waits for the cardholder's answer before it expires (5 minutes). */
export const AUTHENTICATION_TTL_MS = 5 * 60 * 1000

/** Job that expires one challenge at its `expires_at` (reads expire it too, the moment the clock passes). */
export const AUTHENTICATION_EXPIRE_JOB = 'authentication.expire' satisfies JobType

/**
 * Records expiries: marks due challenges expired and emits authentication.updated once for each. `deps.clock` is the
 * challenges' time: a sandbox clock's for one under a clock (many at once leave those under a clock alone).
 */
async function expire(deps: AppDeps, where: Parameters<typeof repo.expireDue>[1]): Promise<void> {
  const now = deps.clock.now()
  await withTx(deps.db, async (trx) => {
    for (const row of await repo.expireDue(trx, where, now)) {
      await emit(
        trx,
        { ...scopeOfRow(row), clockId: row.clock_id },
        'authentication.updated',
        presentAuthentication(row),
        now,
      )
    }
  })
}

/**
 * `authentication.expire` jobs: the challenge expires at its `expires_at` unless it was answered first. Under a
 * sandbox clock the job waits on the clock and runs in its advance, `deps.clock` reading the clock's time.
 */
export async function runExpireJob(deps: AppDeps, job: JobRecord): Promise<JobOutcome> {
  const id = String(job.payload.authentication_id)
  const row = await repo.findAuthentication(deps.db, id)
  if (!row || row.status !== 'pending') return
  // Job runners may claim a job a little early or late; a challenge not yet due is looked at again at its expiry.
  if (row.expires_at.getTime() > deps.clock.now().getTime()) return { retryAt: row.expires_at }
  await expire(deps, { id })
}

/**
 * The caller's authentication by id, with its expiry recorded first if its five minutes have passed, and the
 * dependencies of its time (a sandbox clock's, for one under a clock).
 */
async function requireAuthentication(
  deps0: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<{ row: repo.AuthenticationOnClock; deps: AppDeps }> {
  let row = requireOwned(
    isId('tdsa', id) ? await repo.findAuthentication(deps0.db, id) : undefined,
    ctx,
    'authentication_not_found',
  )
  const deps = await onClock(deps0, row.clock_id)
  if (row.status === 'pending' && row.expires_at.getTime() <= deps.clock.now().getTime()) {
    await expire(deps, { id: row.id })
    row = (await repo.findAuthentication(deps.db, row.id))!
  }
  return { row, deps }
}

/** The program behind the authentication in the path, for capability mounting; null unless it is the caller's. */
export async function authenticationProgramOf(
  deps: AppDeps,
  req: FastifyRequest,
): Promise<{ capabilities: readonly string[] } | null> {
  const id = (req.params as { authentication_id?: string }).authentication_id
  if (!req.ctx || !id || !isId('tdsa', id)) return null
  const row = await repo.findAuthentication(deps.db, id)
  if (
    !row ||
    row.organization_id !== req.ctx.organizationId ||
    row.environment !== req.ctx.environment
  )
    return null
  const program = await findProgram(deps.db, row.program_id)
  return program ? { capabilities: program.capabilities } : null
}

/**
 * Sandbox: a merchant checkout asks for an out-of-band challenge on an active card. The authentication
 * is `pending` until answered or until it expires five minutes later (a job records that, reads too).
 */
export async function simulateAuthentication(
  deps: AppDeps,
  ctx: RequestCtx,
  body: SimulateAuthenticationBody,
): Promise<AuthenticationView> {
  const card = await requireCard(deps.db, ctx, body.card_id, 'card_id')
  const program = await requireCardProgram(deps.db, card)
  requireSimulatorFeed(deps.processors, program, 'three_d_secure')
  requireActiveCard(card, 'authenticated')
  let now = deps.clock.now()
  let expiresAt = new Date(now.getTime() + AUTHENTICATION_TTL_MS)
  const m = body.merchant ?? {}
  return withTx(deps.db, async (trx) => {
    let row: repo.AuthenticationRow = await repo.insertAuthentication(trx, {
      id: newId('tdsa'),
      organization_id: card.organization_id,
      environment: card.environment,
      card_id: card.id,
      program_id: card.program_id,
      amount: body.amount,
      currency: body.currency.toUpperCase(),
      merchant: json({
        name: m.name ?? null,
        mcc: m.mcc ?? null,
        city: m.city ?? null,
        country: m.country?.toUpperCase() ?? null,
      }),
      status: 'pending',
      expires_at: expiresAt,
      decided_at: null,
      created_at: now,
      updated_at: now,
    })
    // The insert answers the card's sandbox clock: a challenge under one lives on the clock's time.
    const clockId = (row as repo.AuthenticationOnClock).clock_id
    if (clockId) {
      now = (await onClock({ ...deps, db: trx }, clockId)).clock.now()
      expiresAt = new Date(now.getTime() + AUTHENTICATION_TTL_MS)
      row = await repo.retime(trx, row.id, now, expiresAt)
    }
    await enqueue(trx, {
      type: AUTHENTICATION_EXPIRE_JOB,
      payload: { authentication_id: row.id },
      runAt: expiresAt,
      ...scopeOfRow(row),
      clockId,
    })
    const view = presentAuthentication(row)
    await emit(trx, { ...scopeOfRow(row), clockId }, 'authentication.created', view, now)
    return view
  })
}

/**
 * The caller's answer: pending → approved or declined, once. A challenge already answered, or past its
 * five minutes, is `authentication_invalid_state` (an expiry found here is recorded before answering); one
 * on a card closed since cannot be approved (`card_closed`).
 */
export async function answerAuthentication(
  deps0: AppDeps,
  ctx: RequestCtx,
  id: string,
  answer: 'approved' | 'declined',
): Promise<AuthenticationView> {
  const { row: current, deps: onTime } = await requireAuthentication(deps0, ctx, id)
  const deps = onTime
  // A closed card refuses every operation (card_closed); declining a challenge on it stays possible.
  if (
    answer === 'approved' &&
    current.status === 'pending' &&
    (await requireCard(deps.db, ctx, current.card_id)).status === 'closed'
  ) {
    throw new ApiError('card_closed', {
      message: `Card ${current.card_id} is closed; a challenge on it can only be declined.`,
    })
  }
  const now = deps.clock.now()
  const decided =
    current.status === 'pending' && current.expires_at.getTime() > now.getTime()
      ? await withTx(deps.db, async (trx: Db) => {
          const row = await repo.decide(trx, current.id, answer, now)
          if (row)
            await emit(
              trx,
              { ...scopeOfRow(row), clockId: current.clock_id },
              'authentication.updated',
              presentAuthentication(row),
              now,
            )
          return row
        })
      : undefined
  if (decided) return presentAuthentication(decided)
  const { row: latest } = await requireAuthentication(deps, ctx, id)
  throw new ApiError('authentication_invalid_state', {
    message:
      latest.status === 'expired'
        ? `Authentication ${latest.id} expired at ${latest.expires_at.toISOString()}; the checkout has moved on.`
        : `Authentication ${latest.id} was already ${latest.status}; it can be answered once.`,
  })
}

export async function retrieveAuthentication(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<AuthenticationView> {
  return presentAuthentication((await requireAuthentication(deps, ctx, id)).row)
}

export interface AuthenticationListFilter {
  card_id?: string
  status?: string
}

/** One page of the caller's authentications, newest first, with due expiries recorded first. */
export async function listAuthentications(
  deps: AppDeps,
  ctx: RequestCtx,
  filter: AuthenticationListFilter,
  page: PageParams,
): Promise<ListResult<AuthenticationView>> {
  await expire(deps, { organizationId: ctx.organizationId, environment: ctx.environment })
  const where: repo.AuthenticationFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    cardId: filter.card_id,
    status: filter.status,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/authentications',
    page,
    sortKey: (r: repo.AuthenticationRow) => r.id,
    fetch: (bounds) => repo.listAuthentications(deps.db, where, bounds),
    present: presentAuthentication,
  })
}
