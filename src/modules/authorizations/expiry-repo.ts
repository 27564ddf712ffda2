import { sql } from 'kysely'
import type { Db } from '../../db/types.js'
import { EVENT_ROW_COLUMNS, emitPerRow } from '../events/index.js'
import type { AuthorizationRow } from './repo.js'
import type { AuthorizationView } from './schemas.js'

/** The authorizations `ids` of one account (another account's, or none, are absent). */
export async function authorizationsOfAccount(
  db: Db,
  accountId: string,
  ids: readonly string[],
): Promise<AuthorizationRow[]> {
  return db
    .selectFrom('authorizations')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', sql<string>`ANY(${[...ids]}::text[])`)
    .execute()
}

/** One authorization's expiry as `expireAll` writes it. */
export interface ExpiryWrite {
  id: string
  heldAmount: number
  status: string
  /** The expiry's time (the authorization's `updated_at`). */
  at: Date
  /** Its `authorization.updated`: id (in time order), scope, and the authorization as the expiry left it. */
  eventId: string
  organizationId: string
  environment: string
  clockId: string | null
  view: AuthorizationView
}

/**
 * Expiries in one statement, in the caller's transaction under the account's lock: each authorization still
 * `pending` takes its new held amount, status and `updated_at`, and emits its `authorization.updated` (dated `wall`,
 * with its deliveries); one no longer pending is left alone and emits nothing. Answers the ids written and whether
 * deliveries were queued.
 */
export async function expireAll(
  trx: Db,
  writes: readonly ExpiryWrite[],
  wall: Date,
): Promise<{ done: string[]; notified: boolean }> {
  if (writes.length === 0) return { done: [], notified: false }
  const items = JSON.stringify(
    writes.map((w) => ({
      id: w.id,
      held_amount: w.heldAmount,
      status: w.status,
      at: w.at,
      event_id: w.eventId,
      organization_id: w.organizationId,
      environment: w.environment,
      clock_id: w.clockId,
      view: w.view,
    })),
  )
  const events = emitPerRow('written', EVENT_ROW_COLUMNS, sql`view`, wall)
  const { rows } = await sql<{ done: string[]; notified: number }>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${items}::json) AS i(id text, held_amount bigint, status text, at timestamptz,
        event_id text, organization_id text, environment text, clock_id text, view json)
    ),
    expired AS (
      UPDATE authorizations AS a SET held_amount = i.held_amount, status = i.status, updated_at = i.at
      FROM input AS i WHERE a.id = i.id AND a.status = 'pending'
      RETURNING a.id
    ),
    written AS (
      SELECT event_id, organization_id, environment, 'authorization.updated'::text AS event_type, view, clock_id
      FROM input WHERE id IN (SELECT id FROM expired)
    ),
    ${events.ctes}
    SELECT coalesce((SELECT json_agg(id) FROM expired), '[]'::json) AS done, ${events.notified} AS notified`.execute(
    trx,
  )
  return { done: rows[0]!.done, notified: Boolean(rows[0]!.notified) }
}
