import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { EsimPackagesTable, EsimTopUpsTable } from './types.js'
import './types.js'

/** Whose view of sale statuses applies: the sandbox simulator may override them per organization. */
export interface CatalogueView {
  organizationId: string
  environment: string
}

/** The platform's own view (operator): no organization's overrides. */
export const PLATFORM_VIEW: CatalogueView = { organizationId: '', environment: '' }

/** `effective_updated_at`: the later of the row's own change and this view's sale-status override. */
export type PackageRow = Selectable<EsimPackagesTable> & {
  effective_status: string
  effective_updated_at: Date
}
export type TopUpRow = Selectable<EsimTopUpsTable> & {
  effective_status: string
  package_status: string
  effective_updated_at: Date
}

/** Withdrawn by the platform is final for everyone; otherwise an organization's sandbox override wins. */
const effective = (
  table: 'p' | 't',
) => sql<string>`CASE WHEN ${sql.ref(`${table}.status`)} = 'withdrawn' THEN 'withdrawn'
  ELSE COALESCE(${sql.ref(`o${table}.status`)}, ${sql.ref(`${table}.status`)}) END`
/** When the item last changed as this view sees it: a sandbox override changes it too (GREATEST skips a missing one). */
const effectiveUpdatedAt = (table: 'p' | 't') =>
  sql<Date>`GREATEST(${sql.ref(`${table}.updated_at`)}, ${sql.ref(`o${table}.updated_at`)})`

function packagesQuery(db: Db, view: CatalogueView) {
  return db
    .selectFrom('esim_packages as p')
    .leftJoin('esim_status_overrides as op', (j) =>
      j
        .onRef('op.item_id', '=', 'p.id')
        .on('op.organization_id', '=', view.organizationId)
        .on('op.environment', '=', view.environment),
    )
    .selectAll('p')
    .select([
      effective('p').as('effective_status'),
      effectiveUpdatedAt('p').as('effective_updated_at'),
    ])
}

export interface PackageFilters {
  country?: string
  region?: string
  status?: string
}

export async function listPackages(
  db: Db,
  view: CatalogueView,
  filters: PackageFilters,
  bounds: PageBounds,
): Promise<PackageRow[]> {
  let q = packagesQuery(db, view)
  if (filters.country)
    q = q.where(sql<boolean>`p.countries @> ${JSON.stringify([filters.country])}::jsonb`)
  if (filters.region) q = q.where('p.region', '=', filters.region)
  if (filters.status) q = q.where(effective('p'), '=', filters.status)
  return applyBounds(q, bounds, 'p.id', 'asc').execute() as Promise<PackageRow[]>
}

export async function findPackage(
  db: Db,
  view: CatalogueView,
  id: string,
): Promise<PackageRow | undefined> {
  return packagesQuery(db, view).where('p.id', '=', id).executeTakeFirst() as Promise<
    PackageRow | undefined
  >
}

function topUpsQuery(db: Db, view: CatalogueView) {
  return db
    .selectFrom('esim_top_ups as t')
    .innerJoin('esim_packages as p', 'p.id', 't.package_id')
    .leftJoin('esim_status_overrides as ot', (j) =>
      j
        .onRef('ot.item_id', '=', 't.id')
        .on('ot.organization_id', '=', view.organizationId)
        .on('ot.environment', '=', view.environment),
    )
    .leftJoin('esim_status_overrides as op', (j) =>
      j
        .onRef('op.item_id', '=', 'p.id')
        .on('op.organization_id', '=', view.organizationId)
        .on('op.environment', '=', view.environment),
    )
    .selectAll('t')
    .select([
      effective('t').as('effective_status'),
      effective('p').as('package_status'),
      effectiveUpdatedAt('t').as('effective_updated_at'),
    ])
}

export async function topUpsOfPackages(
  db: Db,
  view: CatalogueView,
  packageIds: string[],
): Promise<TopUpRow[]> {
  if (packageIds.length === 0) return []
  return topUpsQuery(db, view)
    .where('t.package_id', 'in', packageIds)
    .orderBy('t.id')
    .execute() as Promise<TopUpRow[]>
}

export async function findTopUp(
  db: Db,
  view: CatalogueView,
  id: string,
): Promise<TopUpRow | undefined> {
  return topUpsQuery(db, view).where('t.id', '=', id).executeTakeFirst() as Promise<
    TopUpRow | undefined
  >
}

/** Add-ons of the given packages that are sold now, one page of them, in catalogue order. */
export async function listSoldTopUps(
  db: Db,
  view: CatalogueView,
  packageIds: string[],
  bounds: PageBounds,
): Promise<TopUpRow[]> {
  if (packageIds.length === 0) return []
  const q = topUpsQuery(db, view)
    .where('t.package_id', 'in', packageIds)
    .where(effective('t'), '=', 'on_sale')
    .where(effective('p'), '<>', 'withdrawn')
  return applyBounds(q, bounds, 't.id', 'asc').execute() as Promise<TopUpRow[]>
}

export async function setOverride(
  db: Db,
  view: CatalogueView,
  itemId: string,
  status: string,
  now: Date,
): Promise<void> {
  await sql`INSERT INTO esim_status_overrides (organization_id, environment, item_id, status, updated_at)
    VALUES (${view.organizationId}, ${view.environment}, ${itemId}, ${status}, ${now})
    ON CONFLICT (organization_id, environment, item_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at`.execute(
    db,
  )
}

export async function insertPackage(db: Db, row: Selectable<EsimPackagesTable>): Promise<void> {
  await db
    .insertInto('esim_packages')
    .values({ ...row, countries: JSON.stringify(row.countries) })
    .execute()
}

export async function insertTopUp(db: Db, row: Selectable<EsimTopUpsTable>): Promise<void> {
  await db.insertInto('esim_top_ups').values(row).execute()
}

export type PackageChanges = Partial<
  Pick<
    Selectable<EsimPackagesTable>,
    'name' | 'data_mb' | 'validity_days' | 'countries' | 'region' | 'price' | 'status'
  >
>

export async function updatePackage(
  db: Db,
  id: string,
  changes: PackageChanges,
  now: Date,
): Promise<void> {
  const { countries, ...rest } = changes
  await db
    .updateTable('esim_packages')
    .set({
      ...rest,
      ...(countries ? { countries: JSON.stringify(countries) } : {}),
      updated_at: now,
    })
    .where('id', '=', id)
    .execute()
}

export type TopUpChanges = Partial<
  Pick<Selectable<EsimTopUpsTable>, 'name' | 'data_mb' | 'validity_days' | 'price' | 'status'>
>

export async function updateTopUp(
  db: Db,
  id: string,
  changes: TopUpChanges,
  now: Date,
): Promise<void> {
  await db
    .updateTable('esim_top_ups')
    .set({ ...changes, updated_at: now })
    .where('id', '=', id)
    .execute()
}
