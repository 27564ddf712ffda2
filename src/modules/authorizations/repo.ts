import { sql, type Insertable, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { AccountRow } from '../accounts/service.js'
import type { CardRow } from '../cards/service.js'
import type { WindowInterval } from './decide.js'
import type { AuthorizationRequestValue, AuthorizationsTable } from './types.js'
import './types.js'

export type AuthorizationRow = Selectable<AuthorizationsTable>

/** The write of a new authorization, not yet run: `emit` runs it in the statement that records its event. */
export function insertAuthorization(trx: Db, row: AuthorizationRow) {
  return trx.insertInto('authorizations').values({
    ...row, merchant: json(row.merchant), request_history: json(row.request_history),
  } satisfies Insertable<AuthorizationsTable>)
}

const ACCOUNT_COLUMNS = [
  'id', 'organization_id', 'environment', 'program_id', 'cardholder_id', 'currency', 'status', 'ledger_balance', 'held_balance',
  'entry_seq', 'upstream_reference', 'block_reason', 'block_note', 'metadata', 'created_at', 'updated_at',
] as const satisfies readonly (keyof AccountRow)[]
/** Marks the account's columns in the joined row (no card column starts with it). */
const PREFIX = 'funding__'

/**
 * A card and its funding account in one statement, the account's row locked for the rest of the transaction:
 * a decision reads both under the lock that orders every move of the account's money.
 */
export async function lockCardAndAccount(trx: Db, cardId: string): Promise<{ card: CardRow; account: AccountRow } | undefined> {
  const accountColumns = sql.join(ACCOUNT_COLUMNS.map((c) => sql`a.${sql.ref(c)} AS ${sql.ref(`${PREFIX}${c}`)}`))
  const { rows } = await sql<Record<string, unknown>>`
    SELECT c.*, ${accountColumns} FROM cards c JOIN accounts a ON a.id = c.account_id
    WHERE c.id = ${cardId} FOR UPDATE OF a`.execute(trx)
  if (rows.length === 0) return undefined
  const card: Record<string, unknown> = {}
  const account: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(rows[0])) {
    if (key.startsWith(PREFIX)) account[key.slice(PREFIX.length)] = value
    else card[key] = value
  }
  return { card: card as CardRow, account: account as AccountRow }
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
