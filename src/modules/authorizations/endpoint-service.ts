import type { AppDeps } from '../../app-deps.js'
import type { PurgeOptions } from '../../db/purge.js'
import { withTx } from '../../db/tx.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { newId } from '../../lib/ids.js'
import { EVENT_RETENTION_MS } from '../events/index.js'
import {
  endpointUrl,
  newWebhookSecret,
  ROTATION_OVERLAP_MS,
  sealSecret,
} from '../webhooks/index.js'
import * as repo from './endpoint-repo.js'
import {
  TIMEOUT_MS_DEFAULT,
  type AuthorizationEndpointAttemptView,
  type AuthorizationEndpointPutBody,
  type AuthorizationEndpointView,
} from './endpoint-schemas.js'
import { circuitOpen, forgetEndpoint } from './integrator.js'

/** The REST shape of the scope's endpoint; the secret appears only when just created or rotated. */
function presentEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  row: repo.AuthorizationEndpointRow,
  secret?: string,
): AuthorizationEndpointView {
  return {
    id: row.id,
    object: 'authorization_endpoint',
    url: row.url,
    timeout_ms: row.timeout_ms,
    stand_in: row.stand_in,
    status: circuitOpen(deps, ctx) ? 'circuit_open' : 'enabled',
    ...(secret !== undefined ? { secret } : {}),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}

function presentAttempt(row: repo.EndpointAttemptRow): AuthorizationEndpointAttemptView {
  return {
    id: row.id,
    object: 'authorization_endpoint_attempt',
    authorization_id: row.authorization_id,
    request_type: row.request_type,
    request_id: row.request_id,
    url: row.url,
    response_status: row.response_status,
    latency_ms: row.latency_ms,
    outcome: row.outcome,
    approved_amount: row.approved_amount === null ? null : Number(row.approved_amount),
    stand_in_reason: row.stand_in_reason,
    error: row.error,
    created_at: iso(row.created_at)!,
  }
}

async function requireEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
): Promise<repo.AuthorizationEndpointRow> {
  const row = await repo.findEndpoint(deps.db, ctx.organizationId, ctx.environment)
  if (!row) throw new ApiError('authorization_endpoint_not_found')
  return row
}

/**
 * PUT: registers the scope's endpoint (with a new secret, shown in this answer only) or changes its url, timeout_ms
 * and stand_in (the secret stays, and is not shown). A new endpoint's omitted settings take their defaults; an
 * existing one's keep their values (a PUT of a new url does not reset its stand-in). Effective at once in this
 * process, within a few seconds in the others.
 */
export async function putEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  body: AuthorizationEndpointPutBody,
): Promise<AuthorizationEndpointView> {
  // The URL rules of webhook endpoints, with the same refusal.
  const url = await endpointUrl(deps, ctx, body.url)
  /** What changes on an existing endpoint: the url, and the settings the body names. */
  const changes = {
    url,
    ...(body.timeout_ms !== undefined ? { timeout_ms: body.timeout_ms } : {}),
    ...(body.stand_in !== undefined ? { stand_in: body.stand_in } : {}),
  }
  const settings = {
    timeout_ms: TIMEOUT_MS_DEFAULT,
    stand_in: 'decline' as const,
    ...changes,
  }
  const secret = newWebhookSecret()
  const { row, created } = await withTx(deps.db, async (trx) => {
    const now = deps.clock.now()
    const current = await repo.findEndpointForUpdate(trx, ctx.organizationId, ctx.environment)
    if (current)
      return {
        row: (await repo.updateEndpoint(trx, current.id, { ...changes, updated_at: now }))!,
        created: false,
      }
    const inserted = await repo.insertEndpoint(trx, {
      id: newId('aep'),
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      ...settings,
      secret_sealed: sealSecret(deps.config.masterKey, secret),
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      created_at: now,
      updated_at: now,
    })
    if (inserted) return { row: inserted, created: true }
    // A concurrent PUT of the same scope created it first: this one changes its settings.
    const winner = (await repo.findEndpointForUpdate(trx, ctx.organizationId, ctx.environment))!
    return {
      row: (await repo.updateEndpoint(trx, winner.id, { ...changes, updated_at: now }))!,
      created: false,
    }
  })
  forgetEndpoint(deps, ctx)
  return presentEndpoint(deps, ctx, row, created ? secret : undefined)
}

export async function getEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
): Promise<AuthorizationEndpointView> {
  return presentEndpoint(deps, ctx, await requireEndpoint(deps, ctx))
}

/** DELETE: the service decides alone again (at once in this process, within a few seconds in the others). The attempt log stays. */
export async function deleteEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
): Promise<{ id: string; object: 'authorization_endpoint'; deleted: true }> {
  const row = await repo.deleteEndpoint(deps.db, ctx.organizationId, ctx.environment)
  forgetEndpoint(deps, ctx)
  if (!row) throw new ApiError('authorization_endpoint_not_found')
  return { id: row.id, object: 'authorization_endpoint', deleted: true }
}

/** A new secret, shown in this answer only; the replaced one keeps signing beside it for 24 hours (two `v1=`), as for webhooks. */
export async function rotateEndpointSecret(
  deps: AppDeps,
  ctx: RequestCtx,
): Promise<AuthorizationEndpointView> {
  const secret = newWebhookSecret()
  const row = await withTx(deps.db, async (trx) => {
    const current = await repo.findEndpointForUpdate(trx, ctx.organizationId, ctx.environment)
    if (!current) throw new ApiError('authorization_endpoint_not_found')
    const now = deps.clock.now()
    return (await repo.updateEndpoint(trx, current.id, {
      secret_sealed: sealSecret(deps.config.masterKey, secret),
      previous_secret_sealed: current.secret_sealed,
      previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS),
      updated_at: now,
    }))!
  })
  forgetEndpoint(deps, ctx)
  return presentEndpoint(deps, ctx, row, secret)
}

/** The scope's attempt log, newest first (kept whether or not an endpoint is registered now). */
export async function listAttempts(
  deps: AppDeps,
  ctx: RequestCtx,
  page: PageParams,
): Promise<ListResult<AuthorizationEndpointAttemptView>> {
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/authorization_endpoint/attempts',
    page,
    sortKey: (r: repo.EndpointAttemptRow) => r.id,
    fetch: (bounds) => repo.listAttempts(deps.db, ctx.organizationId, ctx.environment, bounds),
    present: presentAttempt,
  })
}

/** How long attempts are kept: as long as events and webhook deliveries (30 days). */
export const ATTEMPT_RETENTION_MS = EVENT_RETENTION_MS
/** How often attempts past their retention are removed. */
export const ATTEMPT_PURGE_EVERY_MS = 60 * 60 * 1000

/** Removes attempts past their retention; answers how many. */
export async function purgeExpiredAttempts(deps: AppDeps, options?: PurgeOptions): Promise<number> {
  return repo.purgeAttemptsBefore(
    deps.db,
    new Date(deps.clock.now().getTime() - ATTEMPT_RETENTION_MS),
    options,
  )
}
