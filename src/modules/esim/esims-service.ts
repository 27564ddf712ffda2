import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx } from '../../db/tx.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso, requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { emit } from '../events/index.js'
import * as repo from './esims-repo.js'
import type { Esim, EsimBundle, EsimSummary } from './schemas.js'

export type EsimView = Static<typeof Esim>
export type EsimSummaryView = Static<typeof EsimSummary>
export type BundleView = Static<typeof EsimBundle>
export type { EsimRow, BundleRow } from './esims-repo.js'

/** Share of the volume at which the traveller is warned (esim.low_data). */
export const LOW_DATA_RATIO = 0.8

/** The activation code is the profile: `LPA:1$<SM-DP+>$<matching id>` (GSMA SGP.22). */
export function activationCode(smdpAddress: string, matchingId: string): string {
  return `LPA:1$${smdpAddress}$${matchingId}`
}

/** Universal links that open the platform's own eSIM installer with the code filled in (iOS 17.4+, Android 10+). */
export function installUrls(code: string): { ios: string; android: string } {
  const data = encodeURIComponent(code)
  return {
    ios: `https://esimsetup.apple.com/esim_qrcode_provisioning?carddata=${data}`,
    android: `https://esimsetup.android.com/esim_qrcode_provisioning?carddata=${data}`,
  }
}

/** A running package past its expiry reads as expired; the clock decides, no job needed. */
export function bundleStatus(row: repo.BundleRow, now: Date): BundleView['status'] {
  if (row.status === 'running' && row.expires_at && row.expires_at.getTime() <= now.getTime())
    return 'expired'
  return row.status as BundleView['status']
}

export function presentBundle(row: repo.BundleRow, now: Date): BundleView {
  const used = Number(row.data_used_mb)
  return {
    package_id: row.package_id,
    top_up_id: row.top_up_id,
    order_id: row.order_id,
    name: row.top_up_id === null ? row.package_name : `Top-up ${row.top_up_name ?? row.top_up_id}`,
    status: bundleStatus(row, now),
    data_mb: row.data_mb,
    data_used_mb: used,
    data_remaining_mb: row.data_mb === null ? null : Math.max(0, row.data_mb - used),
    activated_at: iso(row.activated_at),
    expires_at: iso(row.expires_at),
  }
}

export function presentEsimSummary(
  row: repo.EsimRow,
  bundles: repo.BundleRow[],
  now: Date,
): EsimSummaryView {
  return {
    id: row.id,
    object: 'esim',
    iccid: row.iccid,
    status: row.status as EsimSummaryView['status'],
    cardholder_id: row.cardholder_id,
    order_id: row.order_id,
    packages: bundles.filter((b) => b.esim_id === row.id).map((b) => presentBundle(b, now)),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}

export function presentEsim(row: repo.EsimRow, bundles: repo.BundleRow[], now: Date): EsimView {
  const code = activationCode(row.smdp_address, row.matching_id)
  const urls = installUrls(code)
  return {
    ...presentEsimSummary(row, bundles, now),
    activation_code: code,
    smdp_address: row.smdp_address,
    matching_id: row.matching_id,
    ios_install_url: urls.ios,
    android_install_url: urls.android,
  }
}

/** The caller's eSIM: another organization's id answers like a missing one. */
export async function requireEsim(db: Db, ctx: Scope, id: string): Promise<repo.EsimRow> {
  const row = isId('esim', id) ? await repo.findEsim(db, id) : undefined
  return requireOwned(row, ctx, 'esim_not_found')
}

export async function bundlesOf(db: Db, esimIds: string[]): Promise<repo.BundleRow[]> {
  return repo.bundlesOf(db, esimIds)
}

export async function retrieveEsim(deps: AppDeps, ctx: RequestCtx, id: string): Promise<EsimView> {
  const row = await requireEsim(deps.db, ctx, id)
  return presentEsim(row, await repo.bundlesOf(deps.db, [row.id]), deps.clock.now())
}

export async function listEsims(
  deps: AppDeps,
  ctx: RequestCtx,
  query: PageParams & { cardholder_id?: string },
): Promise<ListResult<EsimSummaryView>> {
  let bundles: repo.BundleRow[] = []
  const now = deps.clock.now()
  return paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/esim/esims',
    page: query,
    sortKey: (r: repo.EsimRow) => r.id,
    fetch: async (bounds) => {
      const rows = await repo.listEsims(
        deps.db,
        ctx.organizationId,
        ctx.environment,
        query.cardholder_id,
        bounds,
      )
      bundles = await repo.bundlesOf(
        deps.db,
        rows.map((r) => r.id),
      )
      return rows
    },
    present: (row) => presentEsimSummary(row, bundles, now),
  })
}

/** Every eSIM of one cardholder with full details (the hosted page shows their QR codes), newest first. */
export async function cardholderEsims(
  deps: AppDeps,
  ctx: RequestCtx,
  cardholderId: string,
  limit = 20,
): Promise<EsimView[]> {
  const rows = await repo.listEsims(deps.db, ctx.organizationId, ctx.environment, cardholderId, {
    take: limit,
    reverse: false,
  })
  const bundles = await repo.bundlesOf(
    deps.db,
    rows.map((r) => r.id),
  )
  const now = deps.clock.now()
  return rows.map((r) => presentEsim(r, bundles, now))
}

/**
 * Sandbox simulator: the device has used `dataUsedMb` of the running package (the oldest one running when
 * top-ups run beside it; a running total, capped at its volume). Crossing 80 % emits esim.low_data; reaching
 * the volume depletes the package (esim.depleted, after esim.low_data when one report crosses both).
 */
export async function recordUsage(
  deps: AppDeps,
  ctx: RequestCtx,
  esimId: string,
  dataUsedMb: number,
): Promise<EsimView> {
  const now = deps.clock.now()
  return withTx(deps.db, async (trx) => {
    const esim = requireOwned(
      isId('esim', esimId) ? await repo.lockEsim(trx, esimId) : undefined,
      ctx,
      'esim_not_found',
    )
    const bundles = await repo.bundlesOf(trx, [esim.id])
    const current = bundles.find((b) => bundleStatus(b, now) === 'running')
    if (!current)
      throw new ApiError('invalid_parameter', {
        param: 'data_used_mb',
        message: 'No package is running on this eSIM.',
      })
    const before = Number(current.data_used_mb)
    if (dataUsedMb < before) {
      throw new ApiError('invalid_parameter', {
        param: 'data_used_mb',
        message: `Usage only grows: ${before} MB are already used.`,
      })
    }
    const total = current.data_mb
    const used = total === null ? dataUsedMb : Math.min(dataUsedMb, total)
    const depleted = total !== null && used >= total
    await repo.updateBundle(
      trx,
      current.order_id,
      { data_used_mb: used, ...(depleted ? { status: 'depleted' } : {}) },
      now,
    )
    // Data flowing means the profile is installed and switched on.
    if (esim.status === 'released' || esim.status === 'installed')
      await repo.setEsimStatus(trx, esim.id, 'enabled', now)
    else await repo.touchEsim(trx, esim.id, now)
    const fresh = (await repo.findEsim(trx, esim.id))!
    const freshBundles = await repo.bundlesOf(trx, [esim.id])
    if (total !== null) {
      // Crossing the threshold warns even when the same report also uses the rest up (low_data, then depleted).
      if (before < total * LOW_DATA_RATIO && used >= total * LOW_DATA_RATIO) {
        await emit(trx, ctx, 'esim.low_data', presentEsimSummary(fresh, freshBundles, now), now)
      }
      if (depleted)
        await emit(trx, ctx, 'esim.depleted', presentEsimSummary(fresh, freshBundles, now), now)
    }
    return presentEsim(fresh, freshBundles, now)
  })
}
