import type { Selectable, Updateable } from 'kysely'
import type { Db, ProgramsTable } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'

export type ProgramRow = Selectable<ProgramsTable>

export async function findProgram(db: Db, id: string): Promise<ProgramRow | undefined> {
  return db.selectFrom('programs').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The programs of these ids (those that exist), in no particular order. */
export async function findPrograms(db: Db, ids: readonly string[]): Promise<ProgramRow[]> {
  if (ids.length === 0) return []
  return db
    .selectFrom('programs')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute()
}

export async function listPrograms(
  db: Db,
  organizationId: string,
  environment: string,
  bounds: PageBounds,
): Promise<ProgramRow[]> {
  const q = db
    .selectFrom('programs')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
  return applyBounds(q, bounds, 'id', 'asc').execute()
}

/** One organization's programs in both environments, oldest first (the operator's list). */
export async function listOrganizationPrograms(
  db: Db,
  organizationId: string,
  bounds: PageBounds,
): Promise<ProgramRow[]> {
  return applyBounds(
    db.selectFrom('programs').selectAll().where('organization_id', '=', organizationId),
    bounds,
    'id',
    'asc',
  ).execute()
}

/** The platform's programs, any organization, oldest first, narrowed to an organization and an environment when given. */
export async function listPlatformPrograms(
  db: Db,
  filter: { organizationId?: string; environment?: string },
  bounds: PageBounds,
): Promise<ProgramRow[]> {
  let q = db.selectFrom('programs').selectAll()
  if (filter.organizationId) q = q.where('organization_id', '=', filter.organizationId)
  if (filter.environment) q = q.where('environment', '=', filter.environment)
  return applyBounds(q, bounds, 'id', 'asc').execute()
}

export async function countPrograms(
  db: Db,
  organizationId: string,
  environment: string,
): Promise<number> {
  const row = await db
    .selectFrom('programs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

export async function insertProgram(
  db: Db,
  row: Parameters<ReturnType<Db['insertInto']>['values']>[0] & object,
): Promise<ProgramRow> {
  return db
    .insertInto('programs')
    .values(row as never)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Changes the given columns of a program; undefined when there is no such program. */
export async function updateProgram(
  db: Db,
  id: string,
  changes: Updateable<ProgramsTable>,
): Promise<ProgramRow | undefined> {
  return db
    .updateTable('programs')
    .set(changes)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}
