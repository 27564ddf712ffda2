import { createHash } from 'node:crypto'
import type { Selectable, Updateable } from 'kysely'
import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { WebhookEndpointsTable } from './types.js'

export type EndpointRow = Selectable<WebhookEndpointsTable>
type EndpointPatch = Omit<Updateable<WebhookEndpointsTable>, 'enabled_events'> & {
  enabled_events?: string[]
}

export async function findEndpoint(db: Db, id: string): Promise<EndpointRow | undefined> {
  return db.selectFrom('webhook_endpoints').selectAll().where('id', '=', id).executeTakeFirst()
}

export async function findEndpointForUpdate(trx: Db, id: string): Promise<EndpointRow | undefined> {
  return trx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .forUpdate()
    .executeTakeFirst()
}

export async function listEndpoints(
  db: Db,
  organizationId: string,
  environment: string,
  bounds: PageBounds,
): Promise<EndpointRow[]> {
  const q = db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** True when the scope has a webhook endpoint, enabled or not (the console's getting-started checklist). */
export async function anyEndpoint(
  db: Db,
  organizationId: string,
  environment: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .limit(1)
    .executeTakeFirst()
  return row !== undefined
}

/** Two 32-bit keys of the advisory lock that orders endpoint creation in one (organization, environment). */
function endpointScopeLockKey(organizationId: string, environment: string): [number, number] {
  const digest = createHash('sha256')
    .update(`webhook_endpoints\u0000${organizationId}\u0000${environment}`)
    .digest()
  return [digest.readInt32BE(0), digest.readInt32BE(4)]
}

/**
 * Counts a scope's endpoints while holding the scope's advisory lock until the transaction ends, so two
 * concurrent creates in one scope run one after the other and cannot both pass the per-environment limit
 * (the count is read after the lock is granted, so it sees what the previous holder committed).
 */
export async function countEndpointsLocked(
  trx: Db,
  organizationId: string,
  environment: string,
): Promise<number> {
  const [k1, k2] = endpointScopeLockKey(organizationId, environment)
  await sql`SELECT pg_advisory_xact_lock(${k1}::int, ${k2}::int)`.execute(trx)
  const row = await trx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

export interface NewEndpoint {
  id: string
  organization_id: string
  environment: string
  url: string
  description: string | null
  enabled_events: string[]
  secret_sealed: string
  now: Date
}

export async function insertEndpoint(db: Db, e: NewEndpoint): Promise<EndpointRow> {
  return db
    .insertInto('webhook_endpoints')
    .values({
      id: e.id,
      organization_id: e.organization_id,
      environment: e.environment,
      url: e.url,
      description: e.description,
      enabled_events: json(e.enabled_events),
      status: 'enabled',
      secret_sealed: e.secret_sealed,
      previous_secret_sealed: null,
      previous_secret_expires_at: null,
      failing_since: null,
      disabled_reason: null,
      created_at: e.now,
      updated_at: e.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function updateEndpoint(
  db: Db,
  id: string,
  patch: EndpointPatch,
): Promise<EndpointRow | undefined> {
  const { enabled_events, ...rest } = patch
  return db
    .updateTable('webhook_endpoints')
    .set({ ...rest, ...(enabled_events ? { enabled_events: json(enabled_events) } : {}) })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst()
}

export async function deleteEndpoint(db: Db, id: string): Promise<void> {
  await db.deleteFrom('webhook_endpoints').where('id', '=', id).execute()
}

/** Enabled endpoints of a scope subscribed to any of `types` (or to `*`): replay targets. */
export async function enabledEndpoints(
  db: Db,
  organizationId: string,
  environment: string,
): Promise<EndpointRow[]> {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('organization_id', '=', organizationId)
    .where('environment', '=', environment)
    .where('status', '=', 'enabled')
    .orderBy('id')
    .execute()
}

/** Endpoints of an organization (operator console). */
/** A page of one organization's endpoints (both environments), newest first: the operator's list. */
export async function endpointsOfOrganization(
  db: Db,
  organizationId: string,
  bounds: PageBounds,
): Promise<EndpointRow[]> {
  return applyBounds(
    db.selectFrom('webhook_endpoints').selectAll().where('organization_id', '=', organizationId),
    bounds,
    'id',
    'desc',
  ).execute()
}
