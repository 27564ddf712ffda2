import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import { purgeInBatches, type PurgeOptions } from '../../db/purge.js'
import type { Db } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import { lowestIdAt } from '../../lib/ids.js'
import type { AuthorizationEndpointAttemptsTable, AuthorizationEndpointsTable } from './types.js'

export type AuthorizationEndpointRow = Selectable<AuthorizationEndpointsTable>
export type EndpointAttemptRow = Selectable<AuthorizationEndpointAttemptsTable>

/** The scope's endpoint, if it registered one. */
export async function findEndpoint(
  db: Db,
  organizationId: string,
  environment: string,
): Promise<AuthorizationEndpointRow | undefined> {
  return db
    .selectFrom('authorization_endpoints')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .executeTakeFirst()
}

/** The same, locked until the caller's transaction ends (PUT and rotate_secret of one scope run one after the other). */
export async function findEndpointForUpdate(
  trx: Db,
  organizationId: string,
  environment: string,
): Promise<AuthorizationEndpointRow | undefined> {
  return trx
    .selectFrom('authorization_endpoints')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .forUpdate()
    .executeTakeFirst()
}

/** Creates the scope's endpoint; a concurrent create of the same scope loses quietly (undefined) and the caller reads the winner. */
export async function insertEndpoint(
  db: Db,
  row: Insertable<AuthorizationEndpointsTable>,
): Promise<AuthorizationEndpointRow | undefined> {
  return db
    .insertInto('authorization_endpoints')
    .values(row)
    .onConflict((oc) => oc.columns(['organization_id', 'environment']).doNothing())
    .returningAll()
    .executeTakeFirst()
}

export async function updateEndpoint(
  db: Db,
  id: string,
  patch: Updateable<AuthorizationEndpointsTable>,
): Promise<AuthorizationEndpointRow | undefined> {
  return db
    .updateTable('authorization_endpoints')
    .set(patch)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}

export async function deleteEndpoint(
  db: Db,
  organizationId: string,
  environment: string,
): Promise<AuthorizationEndpointRow | undefined> {
  return db
    .deleteFrom('authorization_endpoints')
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .returningAll()
    .executeTakeFirst()
}

export async function insertAttempt(
  db: Db,
  row: Insertable<AuthorizationEndpointAttemptsTable>,
): Promise<void> {
  await db.insertInto('authorization_endpoint_attempts').values(row).execute()
}

/** A page of the scope's attempts, newest first (ids sort by creation time). */
export async function listAttempts(
  db: Db,
  organizationId: string,
  environment: string,
  bounds: PageBounds,
): Promise<EndpointAttemptRow[]> {
  const q = db
    .selectFrom('authorization_endpoint_attempts')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Deletes attempts recorded before `cutoff`, in short batches along the primary key (ids sort by creation time); answers how many. */
export async function purgeAttemptsBefore(
  db: Db,
  cutoff: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'authorization_endpoint_attempts',
    key: 'id',
    orderBy: 'id',
    where: sql`id < ${lowestIdAt('aea', cutoff)} AND created_at < ${cutoff}`,
  })
}
