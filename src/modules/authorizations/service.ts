import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { requireOwned, requireOwnedOnClock } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { requireCard } from '../cards/index.js'
import type { TransactionView } from '../transactions/index.js'
import { inAccountCurrency, incrementAuthorization, precheckIncrement } from './engine.js'
import { askIntegrator, endpointFor } from './integrator.js'
import { captureAuthorization, expireAuthorization, reverseAuthorization } from './operations.js'
import { presentAuthorization } from './present.js'
import * as repo from './repo.js'
import type { AuthorizationView } from './schemas.js'

export { authorize } from './batcher.js'
export { HOLD_LIFETIME_MS } from './engine.js'
export { expireDue } from './expiry.js'
export { presentAuthorization } from './present.js'
export type { AuthorizationRow } from './repo.js'
export type { AuthorizationView } from './schemas.js'

/** The caller's authorization by id: another organization's answers exactly like a missing one. */
export async function requireAuthorization(
  db: Db,
  ctx: Scope,
  authorizationId: string,
): Promise<repo.AuthorizationRow> {
  const row = isId('auth', authorizationId)
    ? await repo.findAuthorization(db, authorizationId)
    : undefined
  return requireOwned(row, ctx, 'authorization_not_found')
}

/**
 * The caller's authorization to move, with the dependencies it moves on: under a sandbox clock (its card's
 * cardholder is on one), `deps.clock` reads the clock's time and `clockId` names it; otherwise `deps` itself. The
 * clock is read with the authorization (in its statement), so an organization without clocks pays nothing more.
 */
async function requireOnItsClock(
  deps: AppDeps,
  ctx: Scope,
  authorizationId: string,
): Promise<{ auth: repo.AuthorizationRow; deps: AppDeps; clockId: string | null }> {
  const found = isId('auth', authorizationId)
    ? await repo.findAuthorizationWithClock(deps.db, authorizationId, ctx.environment === 'sandbox')
    : undefined
  const { row: auth, ...on } = await requireOwnedOnClock(
    deps,
    found,
    ctx,
    'authorization_not_found',
  )
  return { auth, ...on }
}

export async function retrieveAuthorization(
  deps: AppDeps,
  ctx: RequestCtx,
  authorizationId: string,
): Promise<AuthorizationView> {
  return presentAuthorization(await requireAuthorization(deps.db, ctx, authorizationId))
}

export interface AuthorizationListFilter {
  card_id?: string
  account_id?: string
  status?: string
}

/** One page of the caller's authorizations, newest first. */
export async function listAuthorizations(
  deps: AppDeps,
  ctx: RequestCtx,
  filter: AuthorizationListFilter,
  page: PageParams,
): Promise<ListResult<AuthorizationView>> {
  const where: repo.AuthorizationFilter = {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    cardId: filter.card_id,
    accountId: filter.account_id,
    status: filter.status,
  }
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/authorizations',
    page,
    sortKey: (r: repo.AuthorizationRow) => r.id,
    fetch: (bounds) => repo.listAuthorizations(deps.db, where, bounds),
    present: presentAuthorization,
  })
}

/** How many of the latest authorizations `ruleDecisions` looks at for one rule's page. */
export const RULE_DECISIONS_SCAN = 5000

/**
 * The latest authorizations (at most `limit`, newest first) that rule `ruleId` declined or would have declined (a
 * shadow rule) at their latest request, among the caller's `RULE_DECISIONS_SCAN` latest since the rule was created.
 */
export async function listRuleDecisions(
  deps: AppDeps,
  ctx: RequestCtx,
  rule: { id: string; created_at: string },
  limit = 25,
): Promise<AuthorizationView[]> {
  const rows = await repo.ruleDecisions(deps.db, {
    organizationId: ctx.organizationId,
    environment: ctx.environment,
    ruleId: rule.id,
    since: new Date(rule.created_at),
    scan: RULE_DECISIONS_SCAN,
    limit,
  })
  return rows.map(presentAuthorization)
}

/**
 * Sandbox: the network asks to raise a pending authorization by `amount` (approved or declined, see engine); the
 * organization's authorization endpoint is asked too when the rules approve, as for a new authorization.
 */
export async function increment(
  deps: AppDeps,
  ctx: RequestCtx,
  authorizationId: string,
  amount: number,
): Promise<AuthorizationView> {
  // The endpoint is asked on the service's time (its signature's timestamp, its circuit, its attempt log); the
  // increment is decided on the authorization's, a sandbox clock's when it is under one.
  const service = deps
  const { auth, deps: clocked, clockId } = await requireOnItsClock(deps, ctx, authorizationId)
  deps = clocked
  const card = await requireCard(deps.db, ctx, auth.card_id)
  const endpoint = await endpointFor(service, ctx)
  const wouldBe = endpoint ? await precheckIncrement(deps, ctx, auth, card, amount, clockId) : null
  if (!endpoint || !wouldBe)
    return incrementAuthorization(deps, ctx, auth.id, amount, card, undefined, clockId)
  // Asked outside any transaction; the increment's own transaction then writes its answer under the account's lock.
  // The attempt is logged first: that transaction may be the request's own (Idempotency-Key), committed only after the answer.
  const { outcome, logged } = await askIntegrator(service, endpoint, {
    scope: ctx,
    authorization: wouldBe,
    // In the account's currency (converted when the authorization is foreign), as a partial approval answers.
    request: { type: 'increment', amount: inAccountCurrency(auth, amount).amount },
    requestId: ctx.requestId,
  })
  await logged
  return incrementAuthorization(deps, ctx, auth.id, amount, card, outcome, clockId)
}

/** Sandbox: the merchant reverses all or part of what a pending authorization holds. */
export async function reverse(
  deps: AppDeps,
  ctx: RequestCtx,
  authorizationId: string,
  amount?: number,
): Promise<AuthorizationView> {
  const on = await requireOnItsClock(deps, ctx, authorizationId)
  return reverseAuthorization(on.deps, on.auth, amount, on.clockId)
}

/**
 * Sandbox: the merchant captures (clears) an authorization, creating a pending capture transaction; `currency` may
 * name the merchant's currency of a foreign authorization (re-rated at the rate now), else `amount` is the account's.
 */
export async function capture(
  deps: AppDeps,
  ctx: RequestCtx,
  authorizationId: string,
  amount?: number,
  close = true,
  currency?: string,
): Promise<TransactionView> {
  const on = await requireOnItsClock(deps, ctx, authorizationId)
  return captureAuthorization(on.deps, on.auth, { amount, currency }, close, on.clockId)
}

/** Sandbox: the hold of a pending authorization runs out now. */
export async function expire(
  deps: AppDeps,
  ctx: RequestCtx,
  authorizationId: string,
): Promise<AuthorizationView> {
  const on = await requireOnItsClock(deps, ctx, authorizationId)
  return expireAuthorization(on.deps, on.auth, on.clockId)
}
