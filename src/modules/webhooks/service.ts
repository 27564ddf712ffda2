import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso, requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import { EVENT_API_VERSION, subscriptionRefusal } from '../events/index.js'
import * as repo from './repo.js'
import type {
  WebhookEndpoint,
  WebhookEndpointCreateBody,
  WebhookEndpointUpdateBody,
} from './schemas.js'
import { newWebhookSecret, ROTATION_OVERLAP_MS, sealSecret } from './secrets.js'
import { checkWebhookUrl, WebhookUrlRefused } from './url-policy.js'

export type EndpointView = Static<typeof WebhookEndpoint>
export type { EndpointRow } from './repo.js'

/** The interface's limit: endpoints per organization and environment, whatever their status. */
export const MAX_ENDPOINTS_PER_ENVIRONMENT = 10

/** The REST shape of an endpoint; the secret appears only when just created or rotated. */
export function presentEndpoint(row: repo.EndpointRow, secret?: string): EndpointView {
  return {
    id: row.id,
    object: 'webhook_endpoint',
    url: row.url,
    description: row.description,
    enabled_events: row.enabled_events,
    status: row.status,
    failing_since: iso(row.failing_since),
    disabled_reason: row.status === 'disabled' ? (row.disabled_reason ?? 'manual') : null,
    api_version: EVENT_API_VERSION,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
    ...(secret !== undefined ? { secret } : {}),
  }
}

/**
 * The URL an endpoint may be registered at (a webhook endpoint, or the authorization endpoint, which is called like
 * one), normalized: the environment's URL policy (`url-policy.ts`); a refusal is `invalid_webhook_url` on `url`.
 */
export async function endpointUrl(deps: AppDeps, ctx: RequestCtx, raw: string): Promise<string> {
  try {
    return (await checkWebhookUrl(raw, deps.config.webhookUrlPolicy[ctx.environment])).toString()
  } catch (err) {
    if (err instanceof WebhookUrlRefused)
      throw new ApiError('invalid_webhook_url', { param: 'url', message: err.message })
    throw err
  }
}

/** `*`, exact types and known prefix wildcards (the request schema refuses the rest first, in the same words); duplicates dropped. */
function validEvents(deps: AppDeps, types: string[]): string[] {
  types.forEach((t, i) => {
    const refusal = subscriptionRefusal(t, deps.config.baseUrl)
    if (refusal !== null)
      throw new ApiError('invalid_parameter', { param: `enabled_events[${i}]`, message: refusal })
  })
  return [...new Set(types)]
}

/** The caller's endpoint by id: another organization's answers like a missing one, its other environment's environment_mismatch. */
export async function ownedEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<repo.EndpointRow> {
  const row = isId('whe', id) ? await repo.findEndpoint(deps.db, id) : undefined
  return requireOwned(row, ctx, 'webhook_endpoint_not_found')
}

/** `inSameTx` runs in the creation's transaction (the console's audit row). */
export async function createEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  body: WebhookEndpointCreateBody,
  inSameTx?: InSameTx<repo.EndpointRow>,
): Promise<EndpointView> {
  const url = await endpointUrl(deps, ctx, body.url)
  const enabledEvents = validEvents(deps, body.enabled_events)
  const secret = newWebhookSecret()
  const row = await withTx(deps.db, async (trx) => {
    if (
      (await repo.countEndpointsLocked(trx, ctx.organizationId, ctx.environment)) >=
      MAX_ENDPOINTS_PER_ENVIRONMENT
    ) {
      throw new ApiError('webhook_endpoint_limit_reached', {
        message: `At most ${MAX_ENDPOINTS_PER_ENVIRONMENT} webhook endpoints per environment; delete one first.`,
      })
    }
    const inserted = await repo.insertEndpoint(trx, {
      id: newId('whe'),
      organization_id: ctx.organizationId,
      environment: ctx.environment,
      url,
      description: body.description ?? null,
      enabled_events: enabledEvents,
      secret_sealed: sealSecret(deps.config.masterKey, secret),
      now: deps.clock.now(),
    })
    await inSameTx?.(trx, inserted)
    return inserted
  })
  return presentEndpoint(row, secret)
}

export async function listEndpoints(
  deps: AppDeps,
  ctx: RequestCtx,
  page: PageParams,
): Promise<ListResult<EndpointView>> {
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/webhook_endpoints',
    page,
    sortKey: (r: repo.EndpointRow) => r.id,
    fetch: (bounds) => repo.listEndpoints(deps.db, ctx.organizationId, ctx.environment, bounds),
    present: (r) => presentEndpoint(r),
  })
}

export async function getEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<EndpointView> {
  return presentEndpoint(await ownedEndpoint(deps, ctx, id))
}

/**
 * PATCH: re-enabling clears the failure record, so the 72-hour clock starts again from the next failure. `inSameTx`
 * runs in the update's transaction (the console's audit row).
 */
export async function updateEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  body: WebhookEndpointUpdateBody,
  inSameTx?: InSameTx<repo.EndpointRow>,
): Promise<EndpointView> {
  const current = await ownedEndpoint(deps, ctx, id)
  const patch: Parameters<typeof repo.updateEndpoint>[2] = { updated_at: deps.clock.now() }
  if (body.url !== undefined) patch.url = await endpointUrl(deps, ctx, body.url)
  if (body.enabled_events !== undefined)
    patch.enabled_events = validEvents(deps, body.enabled_events)
  if (body.description !== undefined) patch.description = body.description
  if (body.status !== undefined && body.status !== current.status) {
    patch.status = body.status
    patch.failing_since = null
    patch.disabled_reason = body.status === 'disabled' ? 'manual' : null
  }
  const row = await withTx(deps.db, async (trx) => {
    const updated = await repo.updateEndpoint(trx, current.id, patch)
    if (updated) await inSameTx?.(trx, updated)
    return updated
  })
  if (!row) throw new ApiError('webhook_endpoint_not_found')
  return presentEndpoint(row)
}

/** Deletes the endpoint; `inSameTx` runs in the deletion's transaction (the console's audit row). */
export async function deleteEndpoint(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  inSameTx?: InSameTx<repo.EndpointRow>,
): Promise<{ id: string; object: 'webhook_endpoint'; deleted: true }> {
  const row = await ownedEndpoint(deps, ctx, id)
  await withTx(deps.db, async (trx) => {
    await repo.deleteEndpoint(trx, row.id)
    await inSameTx?.(trx, row)
  })
  return { id: row.id, object: 'webhook_endpoint', deleted: true }
}

/**
 * New secret now; the replaced one keeps signing alongside it for 24 hours, so receivers can switch without gaps.
 * `inSameTx` runs in the rotation's transaction (the console's audit row).
 */
export async function rotateSecret(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  inSameTx?: InSameTx<repo.EndpointRow>,
): Promise<EndpointView> {
  const owned = await ownedEndpoint(deps, ctx, id)
  const secret = newWebhookSecret()
  const row = await withTx(deps.db, async (trx) => {
    // Under the row lock, so two concurrent rotations chain (old → first → second) instead of losing one.
    const current = await repo.findEndpointForUpdate(trx, owned.id)
    if (!current) return undefined
    const now = deps.clock.now()
    const rotated = await repo.updateEndpoint(trx, current.id, {
      secret_sealed: sealSecret(deps.config.masterKey, secret),
      previous_secret_sealed: current.secret_sealed,
      previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS),
      updated_at: now,
    })
    if (rotated) await inSameTx?.(trx, rotated)
    return rotated
  })
  if (!row) throw new ApiError('webhook_endpoint_not_found')
  return presentEndpoint(row, secret)
}

/** True when the scope has a webhook endpoint (the console's getting-started checklist). */
export function hasWebhookEndpoint(db: Db, scope: Scope): Promise<boolean> {
  return repo.anyEndpoint(db, scope.organizationId, scope.environment)
}
