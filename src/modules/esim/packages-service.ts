import type { Static } from 'typebox'
import type { AppDeps } from '../../app-deps.js'
import { withTx, type InSameTx } from '../../db/tx.js'
import type { RequestCtx } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { iso } from '../../http/ownership.js'
import { OPERATOR_CTX, paginate, type ListResult, type PageParams } from '../../http/pagination.js'
import { isId, newId } from '../../lib/ids.js'
import * as repo from './packages-repo.js'
import type { EsimPackage, EsimTopUp, PackageListQuery } from './schemas.js'
import type { SaleStatus } from './types.js'

export type PackageView = Static<typeof EsimPackage>
export type TopUpView = Static<typeof EsimTopUp>
export type { PackageRow, TopUpRow, CatalogueView } from './packages-repo.js'
export { PLATFORM_VIEW } from './packages-repo.js'

/** The catalogue as one caller sees it: sandbox simulator overrides belong to its organization. */
export function viewOf(ctx: RequestCtx): repo.CatalogueView {
  return { organizationId: ctx.organizationId, environment: ctx.environment }
}

export function presentPackage(row: repo.PackageRow, topUps: repo.TopUpRow[]): PackageView {
  return {
    id: row.id,
    object: 'esim_package',
    name: row.name,
    data_mb: row.data_mb,
    validity_days: row.validity_days,
    countries: row.countries,
    region: row.region as PackageView['region'],
    price: Number(row.price),
    currency: row.currency,
    status: row.effective_status as SaleStatus,
    // What can be bought for it: nothing once the package is withdrawn (its add-ons are refused then).
    top_up_ids:
      row.effective_status === 'withdrawn'
        ? []
        : topUps
            .filter((t) => t.package_id === row.id && t.effective_status === 'on_sale')
            .map((t) => t.id),
    created_at: iso(row.created_at)!,
    updated_at: iso(row.effective_updated_at)!,
  }
}

export function presentTopUp(row: repo.TopUpRow): TopUpView {
  return {
    id: row.id,
    object: 'esim_top_up',
    package_id: row.package_id,
    name: row.name,
    data_mb: row.data_mb,
    validity_days: row.validity_days,
    price: Number(row.price),
    currency: row.currency,
    status: row.effective_status as SaleStatus,
    created_at: iso(row.created_at)!,
    updated_at: iso(row.effective_updated_at)!,
  }
}

async function presentMany(
  deps: AppDeps,
  view: repo.CatalogueView,
  rows: repo.PackageRow[],
): Promise<PackageView[]> {
  const topUps = await repo.topUpsOfPackages(
    deps.db,
    view,
    rows.map((r) => r.id),
  )
  return rows.map((r) => presentPackage(r, topUps))
}

export async function listPackages(
  deps: AppDeps,
  ctx: RequestCtx,
  query: Static<typeof PackageListQuery>,
): Promise<ListResult<PackageView>> {
  const view = viewOf(ctx)
  const filters = {
    country: query.country?.toUpperCase(),
    region: query.region,
    status: query.status,
  }
  let presented: Map<string, PackageView> = new Map()
  const page = await paginate({
    ctx,
    cursors: deps.cursors,
    url: '/v1/esim/packages',
    page: query as PageParams,
    sortKey: (r: repo.PackageRow) => r.id,
    fetch: async (bounds) => {
      const rows = await repo.listPackages(deps.db, view, filters, bounds)
      presented = new Map((await presentMany(deps, view, rows)).map((p) => [p.id, p]))
      return rows
    },
    present: (r) => presented.get(r.id)!,
  })
  return page
}

/** A page of the platform's catalogue as the platform sees it (no organization's sandbox overrides), oldest first: the operator's console. */
export async function listPlatformPackages(
  deps: AppDeps,
  filters: { status?: string },
  page: PageParams,
): Promise<ListResult<PackageView>> {
  let presented: Map<string, PackageView> = new Map()
  return paginate({
    ctx: OPERATOR_CTX,
    cursors: deps.cursors,
    url: '/console/operator/esim/packages',
    page,
    sortKey: (r: repo.PackageRow) => r.id,
    fetch: async (bounds) => {
      const rows = await repo.listPackages(
        deps.db,
        repo.PLATFORM_VIEW,
        { status: filters.status },
        bounds,
      )
      presented = new Map((await presentMany(deps, repo.PLATFORM_VIEW, rows)).map((p) => [p.id, p]))
      return rows
    },
    present: (r) => presented.get(r.id)!,
  })
}

/** A package by id in the caller's view; `param` names the body field when it came from one. */
export async function requirePackage(
  deps: AppDeps,
  view: repo.CatalogueView,
  id: string,
  param?: string,
): Promise<repo.PackageRow> {
  const row = isId('pkg', id) ? await repo.findPackage(deps.db, view, id) : undefined
  if (!row) throw new ApiError('esim_package_not_found', param ? { param } : {})
  return row
}

export async function retrievePackage(
  deps: AppDeps,
  view: repo.CatalogueView,
  id: string,
): Promise<PackageView> {
  const row = await requirePackage(deps, view, id)
  return (await presentMany(deps, view, [row]))[0]
}

/** The package about to be bought: it must exist and be on sale now. */
export async function requireOrderablePackage(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
): Promise<repo.PackageRow> {
  const row = await requirePackage(deps, viewOf(ctx), id, 'package_id')
  if (row.effective_status !== 'on_sale') {
    throw new ApiError('esim_package_unavailable', {
      param: 'package_id',
      message: `Package ${row.id} is ${row.effective_status}; it cannot be ordered.`,
    })
  }
  return row
}

export async function findTopUp(
  deps: AppDeps,
  view: repo.CatalogueView,
  id: string,
): Promise<repo.TopUpRow | undefined> {
  return isId('topup', id) ? repo.findTopUp(deps.db, view, id) : undefined
}

export async function listSoldTopUps(
  deps: AppDeps,
  view: repo.CatalogueView,
  packageIds: string[],
  bounds: Parameters<typeof repo.listSoldTopUps>[3],
): Promise<repo.TopUpRow[]> {
  return repo.listSoldTopUps(deps.db, view, packageIds, bounds)
}

function refuseRevival(id: string, from: string, to: SaleStatus): void {
  if (from === 'withdrawn' && to !== 'withdrawn') {
    throw new ApiError('esim_package_unavailable', {
      param: 'status',
      message: `${id} is withdrawn; withdrawal is permanent.`,
    })
  }
}

/**
 * Sandbox simulator: changes the sale status of a package or add-on as this organization sees it.
 * A withdrawn item never returns, whoever withdrew it.
 */
export async function simulateSaleStatus(
  deps: AppDeps,
  ctx: RequestCtx,
  id: string,
  status: SaleStatus,
): Promise<PackageView | TopUpView> {
  const view = viewOf(ctx)
  if (isId('topup', id)) {
    const topUp = await repo.findTopUp(deps.db, view, id)
    if (!topUp) throw new ApiError('esim_package_not_found')
    refuseRevival(id, topUp.effective_status, status)
    await repo.setOverride(deps.db, view, id, status, deps.clock.now())
    return presentTopUp((await repo.findTopUp(deps.db, view, id))!)
  }
  const row = await requirePackage(deps, view, id)
  refuseRevival(id, row.effective_status, status)
  await repo.setOverride(deps.db, view, id, status, deps.clock.now())
  return retrievePackage(deps, view, id)
}

export interface PackageInput {
  name: string
  data_mb: number | null
  validity_days: number
  countries: string[]
  region: string
  price: number
  currency: string
  status?: SaleStatus
  top_ups?: {
    name: string
    data_mb: number | null
    validity_days: number
    price: number
    status?: SaleStatus
  }[]
}

/** Operator: a new package (and its add-ons) in the platform catalogue. */
export async function createPackage(deps: AppDeps, input: PackageInput): Promise<PackageView> {
  const now = deps.clock.now()
  const id = newId('pkg')
  await repo.insertPackage(deps.db, {
    id,
    name: input.name,
    data_mb: input.data_mb,
    validity_days: input.validity_days,
    countries: input.countries.map((c) => c.toUpperCase()),
    region: input.region,
    price: input.price,
    currency: input.currency.toUpperCase(),
    status: input.status ?? 'on_sale',
    created_at: now,
    updated_at: now,
  })
  for (const t of input.top_ups ?? []) {
    await repo.insertTopUp(deps.db, {
      id: newId('topup'),
      package_id: id,
      name: t.name,
      data_mb: t.data_mb,
      validity_days: t.validity_days,
      price: t.price,
      currency: input.currency.toUpperCase(),
      status: t.status ?? 'on_sale',
      created_at: now,
      updated_at: now,
    })
  }
  return retrievePackage(deps, repo.PLATFORM_VIEW, id)
}

/**
 * Operator: changes a package; a withdrawn package stays withdrawn. `inSameTx`: the caller's work in the change's
 * transaction (the console's audit row), given the package as it was before.
 */
export async function updatePackage(
  deps: AppDeps,
  id: string,
  changes: repo.PackageChanges,
  inSameTx?: InSameTx<repo.PackageRow>,
): Promise<PackageView> {
  const row = await requirePackage(deps, repo.PLATFORM_VIEW, id)
  if (changes.status) refuseRevival(id, row.status, changes.status as SaleStatus)
  await withTx(deps.db, async (trx) => {
    await repo.updatePackage(
      trx,
      id,
      {
        ...changes,
        ...(changes.countries ? { countries: changes.countries.map((c) => c.toUpperCase()) } : {}),
      },
      deps.clock.now(),
    )
    await inSameTx?.(trx, row)
  })
  return retrievePackage(deps, repo.PLATFORM_VIEW, id)
}

/** Operator: changes an add-on (its price, or its sale status). */
export async function updateTopUp(
  deps: AppDeps,
  id: string,
  changes: repo.TopUpChanges,
): Promise<TopUpView> {
  const row = await findTopUp(deps, repo.PLATFORM_VIEW, id)
  if (!row)
    throw new ApiError('esim_package_not_found', { message: `No eSIM add-on with id ${id}.` })
  if (changes.status) refuseRevival(id, row.status, changes.status as SaleStatus)
  await repo.updateTopUp(deps.db, id, changes, deps.clock.now())
  return presentTopUp((await findTopUp(deps, repo.PLATFORM_VIEW, id))!)
}
