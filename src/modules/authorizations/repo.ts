import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { WindowInterval } from './decide.js'
import type { AuthorizationRequestValue, AuthorizationsTable } from './types.js'
import './types.js'

export type AuthorizationRow = Selectable<AuthorizationsTable>

/** Writes a new authorization; the caller already has every value, so nothing is read back. */
export async function insertAuthorization(trx: Db, row: AuthorizationRow): Promise<void> {
  await trx.insertInto('authorizations').values({
    ...row, merchant: json(row.merchant), request_history: json(row.request_history),
  } satisfies Insertable<AuthorizationsTable>).execute()
}

export async function findAuthorization(db: Db, id: string): Promise<AuthorizationRow | undefined> {
  return db.selectFrom('authorizations').selectAll().where('id', '=', id).executeTakeFirst()
}

/** Updates amounts and status; `request` (an increment) is appended to the request history. */
export async function updateAuthorization(
  trx: Db, id: string, patch: Updateable<AuthorizationsTable>, request?: AuthorizationRequestValue,
): Promise<AuthorizationRow> {
  let q = trx.updateTable('authorizations').set(patch)
  if (request) q = q.set({ request_history: sql`request_history || ${json([request])}::jsonb` as never })
  return q.where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}

/**
 * Approved spend of a card in each window since its start: what approved authorizations still hold plus
 * what they captured (reversed and expired parts are not spend). One statement for every window asked.
 */
export async function spendSince(db: Db, cardId: string, windows: { interval: WindowInterval; from: Date | null }[]): Promise<Partial<Record<WindowInterval, number>>> {
  if (windows.length === 0) return {}
  const earliest = windows.some((w) => w.from === null) ? null : new Date(Math.min(...windows.map((w) => w.from!.getTime())))
  const columns = windows.map((w) => w.from === null
    ? sql`coalesce(sum(held_amount + captured_amount), 0)::bigint AS ${sql.ref(w.interval)}`
    : sql`coalesce(sum(held_amount + captured_amount) FILTER (WHERE created_at >= ${w.from}), 0)::bigint AS ${sql.ref(w.interval)}`)
  const { rows } = await sql<Record<WindowInterval, number>>`
    SELECT ${sql.join(columns)} FROM authorizations
    WHERE card_id = ${cardId} AND approved ${earliest ? sql`AND created_at >= ${earliest}` : sql``}`.execute(db)
  const out: Partial<Record<WindowInterval, number>> = {}
  for (const w of windows) out[w.interval] = Number(rows[0]?.[w.interval] ?? 0)
  return out
}

export interface AuthorizationFilter {
  organizationId: string
  environment: string
  cardId?: string
  accountId?: string
  status?: string
}

/** A page of the caller's authorizations, newest first (ids sort by creation time). */
export async function listAuthorizations(db: Db, filter: AuthorizationFilter, bounds: PageBounds): Promise<AuthorizationRow[]> {
  let q = db.selectFrom('authorizations').selectAll()
    .where('organization_id', '=', filter.organizationId).where('environment', '=', filter.environment)
  if (filter.cardId !== undefined) q = q.where('card_id', '=', filter.cardId)
  if (filter.accountId !== undefined) q = q.where('account_id', '=', filter.accountId)
  if (filter.status !== undefined) q = q.where('status', '=', filter.status)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Pending authorizations whose hold has run out, oldest first: the expiry sweep's worklist. */
export async function dueForExpiry(db: Db, now: Date, limit: number): Promise<{ id: string; account_id: string }[]> {
  return db.selectFrom('authorizations').select(['id', 'account_id'])
    .where('status', '=', 'pending').where('expires_at', '<=', now)
    .orderBy('expires_at').limit(limit).execute()
}
