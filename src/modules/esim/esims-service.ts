import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import type { Db } from '../../db/types.js'
import type { RequestCtx, Scope } from '../../http/context.js'
import { iso, requireOwned } from '../../http/ownership.js'
import { paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId } from '../../lib/ids.js'
import { onClock } from '../../lib/object-clock.js'
import * as repo from './esims-repo.js'
import type { Esim, EsimBundle, EsimSummary } from './schemas.js'

export type EsimView = Static<typeof Esim>
export type EsimSummaryView = Static<typeof EsimSummary>
export type BundleView = Static<typeof EsimBundle>
export type { EsimRow, BundleRow } from './esims-repo.js'

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
    country: row.country,
    packages: bundles.filter((b) => b.esim_id === row.id).map((b) => presentBundle(b, now)),
    installed_at: iso(row.installed_at),
    first_used_at: iso(row.first_used_at),
    valid_until: iso(row.valid_until),
    alert_settings: presentAlertOverrides(row),
    auto_top_up: presentAutoTopUp(row, now),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.updated_at)!,
  }
}

/** The eSIM's own alert settings; null when it has none (the organization's apply). */
export function presentAlertOverrides(
  row: Pick<repo.EsimRow, 'usage_thresholds_pct' | 'validity_warning_hours'>,
): EsimSummaryView['alert_settings'] {
  if (row.usage_thresholds_pct === null && row.validity_warning_hours === null) return null
  return {
    usage_thresholds_pct: row.usage_thresholds_pct,
    validity_warning_hours: row.validity_warning_hours,
  }
}

/** The calendar month (UTC) auto top-ups are counted in: `YYYY-MM`. */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7)
}

/** The eSIM's auto top-up; null when off. The runs counted are this month's (another month's count reads 0). */
export function presentAutoTopUp(
  row: Pick<
    repo.EsimRow,
    | 'auto_top_up_id'
    | 'auto_top_up_account_id'
    | 'auto_top_up_trigger'
    | 'auto_top_up_threshold_pct'
    | 'auto_top_up_max_per_month'
    | 'auto_top_up_month'
    | 'auto_top_up_runs'
  >,
  now: Date,
): EsimSummaryView['auto_top_up'] {
  if (row.auto_top_up_id === null) return null
  return {
    top_up_id: row.auto_top_up_id,
    account_id: row.auto_top_up_account_id!,
    trigger: row.auto_top_up_trigger as 'depleted' | 'threshold',
    max_per_month: row.auto_top_up_max_per_month!,
    threshold_pct: row.auto_top_up_threshold_pct,
    runs_this_month: row.auto_top_up_month === monthOf(now) ? row.auto_top_up_runs : 0,
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
  const now = (await onClock(deps, row.clock_id)).clock.now()
  return presentEsim(row, await repo.bundlesOf(deps.db, [row.id]), now)
}

/**
 * The time each eSIM reads (a package past its expiry reads expired): its sandbox clock's (one read per clock, only
 * when a row is under one), or `now`.
 */
export async function timesOf(
  deps: AppDeps,
  rows: readonly repo.EsimRow[],
  now: Date,
): Promise<(row: repo.EsimRow) => Date> {
  const clocks = new Map<string, Date>()
  for (const r of rows)
    if (r.clock_id && !clocks.has(r.clock_id))
      clocks.set(r.clock_id, (await onClock(deps, r.clock_id)).clock.now())
  return (row) => (row.clock_id ? (clocks.get(row.clock_id) ?? now) : now)
}

export async function listEsims(
  deps: AppDeps,
  ctx: RequestCtx,
  query: PageParams & { cardholder_id?: string },
): Promise<ListResult<EsimSummaryView>> {
  let bundles: repo.BundleRow[] = []
  let timeOf: (row: repo.EsimRow) => Date = () => deps.clock.now()
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
      timeOf = await timesOf(deps, rows, deps.clock.now())
      return rows
    },
    present: (row) => presentEsimSummary(row, bundles, timeOf(row)),
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
  const timeOf = await timesOf(deps, rows, deps.clock.now())
  return rows.map((r) => presentEsim(r, bundles, timeOf(r)))
}
