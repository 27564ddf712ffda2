import { sql, type Selectable } from 'kysely'
import { purgeInBatches, type PurgeOptions } from '../../db/purge.js'
import type { Db, OauthClientsTable, OrganizationsTable } from '../../db/types.js'
import { json } from '../../db/types.js'
import type { AccessTokenGrant } from '../../http/auth.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'

export type ClientRecord = Selectable<OauthClientsTable>

/** A client with the organization's network policy for its environment (both gate the token request). */
export async function findClientForGrant(
  db: Db,
  clientId: string,
): Promise<(ClientRecord & { org_ips: string[] | null }) | undefined> {
  const { rows } = await sql<ClientRecord & { org_ips: string[] | null }>`
    SELECT c.*, np.ip_allowlist AS org_ips FROM oauth_clients c
    LEFT JOIN network_policies np ON np.organization_id = c.organization_id AND np.environment = c.environment
    WHERE c.id = ${clientId}`.execute(db)
  return rows[0]
}

/**
 * What an access token grants, with its client's status and both IP allowlists (the client's and the
 * organization's network policy for the token's environment), in one read: the token lookup of every request
 * that misses the token cache (`ACCESS_TOKEN_GRANT`).
 */
export async function findAccessTokenGrant(
  db: Db,
  tokenHash: string,
): Promise<AccessTokenGrant | undefined> {
  const { rows } = await sql<AccessTokenGrant>`
    SELECT t.client_id, t.organization_id, t.environment, t.scopes, t.expires_at,
           c.status AS client_status, c.ip_allowlist AS client_ips, np.ip_allowlist AS org_ips
    FROM access_tokens t
    JOIN oauth_clients c ON c.id = t.client_id
    LEFT JOIN network_policies np ON np.organization_id = t.organization_id AND np.environment = t.environment
    WHERE t.token_hash = ${tokenHash}`.execute(db)
  return rows[0]
}

/**
 * Records a redeemed jti; false when it is still remembered. The primary key decides concurrent attempts;
 * a row whose assertion has expired (not yet purged) no longer counts and is taken over.
 */
export async function redeemJti(
  db: Db,
  clientId: string,
  jti: string,
  expiresAt: Date,
  now: Date,
): Promise<boolean> {
  const { rows } = await sql<{ jti: string }>`
    INSERT INTO oauth_jtis (client_id, jti, expires_at) VALUES (${clientId}, ${jti}, ${expiresAt})
    ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE oauth_jtis.expires_at < ${now}
    RETURNING jti`.execute(db)
  return rows.length === 1
}

export async function insertAccessToken(
  db: Db,
  row: {
    token_hash: string
    client_id: string
    organization_id: string
    environment: string
    scopes: string[]
    expires_at: Date
  },
): Promise<void> {
  await db
    .insertInto('access_tokens')
    .values({ ...row, scopes: JSON.stringify(row.scopes) })
    .execute()
}

/** Forgets redeemed jtis whose assertion expired before `now` (`oauth_jtis_expiry`), in short batches; answers how many. */
export async function purgeJtisExpiredBefore(
  db: Db,
  now: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'oauth_jtis',
    orderBy: 'expires_at',
    where: sql`expires_at < ${now}`,
  })
}

/** Forgets access tokens expired before `now` (`access_tokens_expiry`), in short batches; answers how many. */
export async function purgeAccessTokensExpiredBefore(
  db: Db,
  now: Date,
  options?: PurgeOptions,
): Promise<number> {
  return purgeInBatches(db, {
    ...options,
    table: 'access_tokens',
    key: 'token_hash',
    orderBy: 'expires_at',
    where: sql`expires_at < ${now}`,
  })
}

export type OrganizationRow = Selectable<OrganizationsTable>

export async function insertOrganization(
  db: Db,
  row: { id: string; name: string },
): Promise<OrganizationRow> {
  return db.insertInto('organizations').values(row).returningAll().executeTakeFirstOrThrow()
}

export async function findOrganization(db: Db, id: string): Promise<OrganizationRow | undefined> {
  return db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The organizations of these ids that exist. */
export async function findOrganizations(
  db: Db,
  ids: readonly string[],
): Promise<OrganizationRow[]> {
  if (ids.length === 0) return []
  return db
    .selectFrom('organizations')
    .selectAll()
    .where('id', 'in', [...ids])
    .execute()
}

/** The platform's organizations, oldest first (the operator's list). */
export async function listOrganizations(db: Db, bounds: PageBounds): Promise<OrganizationRow[]> {
  return applyBounds(db.selectFrom('organizations').selectAll(), bounds, 'id', 'asc').execute()
}

/** One organization's network policies, or (null) every policy that restricts anything, by organization and environment. */
export async function listNetworkPolicies(
  db: Db,
  organizationId: string | null,
  limit: number,
): Promise<
  { organization_id: string; environment: string; ip_allowlist: string[]; updated_at: Date }[]
> {
  let q = db
    .selectFrom('network_policies')
    .select(['organization_id', 'environment', 'ip_allowlist', 'updated_at'])
  q =
    organizationId !== null
      ? q.where('organization_id', '=', organizationId)
      : q.where(sql<boolean>`jsonb_array_length(ip_allowlist) > 0`)
  const rows = await q.orderBy('organization_id').orderBy('environment').limit(limit).execute()
  return rows as {
    organization_id: string
    environment: string
    ip_allowlist: string[]
    updated_at: Date
  }[]
}

/** Sets an organization's allowlist for one environment (the caller announces the change: `changeAuthorization`). */
export async function upsertNetworkPolicy(
  db: Db,
  organizationId: string,
  environment: string,
  cidrs: string[],
  now: Date,
): Promise<void> {
  await db
    .insertInto('network_policies')
    .values({ organization_id: organizationId, environment, ip_allowlist: json(cidrs) })
    .onConflict((oc) =>
      oc
        .columns(['organization_id', 'environment'])
        .doUpdateSet({ ip_allowlist: json(cidrs), updated_at: now }),
    )
    .execute()
}
