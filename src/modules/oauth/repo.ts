import { sql } from 'kysely'
import type { Db } from '../../db/types.js'

export interface ClientRecord {
  id: string
  organization_id: string
  environment: string
  label: string
  scopes: string[]
  jwks: { keys: Record<string, unknown>[] }
  ip_allowlist: string[] | null
  status: string
  created_at: Date
  updated_at: Date
  revoked_at: Date | null
}

/** A client with the organization's network policy for its environment (both gate the token request). */
export async function findClientForGrant(db: Db, clientId: string): Promise<(ClientRecord & { org_ips: string[] | null }) | undefined> {
  const { rows } = await sql<ClientRecord & { org_ips: string[] | null }>`
    SELECT c.*, np.ip_allowlist AS org_ips FROM oauth_clients c
    LEFT JOIN network_policies np ON np.organization_id = c.organization_id AND np.environment = c.environment
    WHERE c.id = ${clientId}`.execute(db)
  return rows[0]
}

/**
 * Records a redeemed jti; false when it is still remembered. The primary key decides concurrent attempts;
 * a row whose assertion has expired (not yet purged) no longer counts and is taken over.
 */
export async function redeemJti(db: Db, clientId: string, jti: string, expiresAt: Date, now: Date): Promise<boolean> {
  const { rows } = await sql<{ jti: string }>`
    INSERT INTO oauth_jtis (client_id, jti, expires_at) VALUES (${clientId}, ${jti}, ${expiresAt})
    ON CONFLICT (client_id, jti) DO UPDATE SET expires_at = EXCLUDED.expires_at WHERE oauth_jtis.expires_at < ${now}
    RETURNING jti`.execute(db)
  return rows.length === 1
}

export async function insertAccessToken(db: Db, row: {
  token_hash: string; client_id: string; organization_id: string; environment: string; scopes: string[]; expires_at: Date
}): Promise<void> {
  await db.insertInto('access_tokens').values({ ...row, scopes: JSON.stringify(row.scopes) }).execute()
}

/** Forgets redeemed jtis and access tokens once they can no longer be used. */
export async function purgeExpiredCredentials(db: Db, now: Date): Promise<void> {
  await db.deleteFrom('oauth_jtis').where('expires_at', '<', now).execute()
  await db.deleteFrom('access_tokens').where('expires_at', '<', now).execute()
}
