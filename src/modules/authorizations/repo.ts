import { sql, type Insertable, type RawBuilder, type Selectable, type Updateable } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import { lowestIdAt } from '../../lib/ids.js'
import type { AccountRow } from '../accounts/service.js'
import type { CardRow } from '../cards/service.js'
import type { EventWithin } from '../events/emit.js'
import { holdCtes } from '../ledger/service.js'
import type { WindowInterval } from './decide.js'
import type { AuthorizationRequestValue, AuthorizationsTable } from './types.js'
import './types.js'

export type AuthorizationRow = Selectable<AuthorizationsTable>

/** The card's columns a decision reads. */
const DECISION_CARD = ['id', 'organization_id', 'environment', 'program_id', 'account_id', 'status', 'exp_month', 'exp_year', 'spending_controls'] as const
/** The funding account's columns a decision reads. */
const DECISION_ACCOUNT = ['id', 'status', 'currency', 'ledger_balance', 'held_balance'] as const
export type DecisionCard = Pick<CardRow, typeof DECISION_CARD[number]>
export type DecisionAccount = Pick<AccountRow, typeof DECISION_ACCOUNT[number]>

/** What a decision reads: the card, its funding account, and the row versions the decision's write is guarded by. */
export interface DecisionFacts {
  card: DecisionCard
  account: DecisionAccount
  /** The rows' `xmin`: any committed change to a row gives it a new one. */
  versions: { card: string; account: string }
}

const decisionColumns = sql.join([
  ...DECISION_CARD.map((c) => sql`c.${sql.ref(c)} AS ${sql.ref(`card_${c}`)}`),
  ...DECISION_ACCOUNT.map((c) => sql`a.${sql.ref(c)} AS ${sql.ref(`account_${c}`)}`),
  sql`c.xmin::text AS card_version`, sql`a.xmin::text AS account_version`,
])

/** The columns of `row` named `prefix` + column, as an object keyed by column. */
function pick<K extends string>(row: Record<string, unknown>, prefix: string, columns: readonly K[]): Record<K, unknown> {
  const out = {} as Record<K, unknown>
  for (const c of columns) out[c] = row[`${prefix}${c}`]
  return out
}

/**
 * A card and its funding account in one statement, only what a decision needs. `lock`: the account's row is
 * locked for the rest of the caller's transaction, and the card's against changes (the pessimistic path);
 * otherwise a plain read whose versions guard the write.
 */
export async function readCardAndAccount(db: Db, cardId: string, lock: boolean): Promise<DecisionFacts | undefined> {
  const { rows } = await sql<Record<string, unknown>>`
    SELECT ${decisionColumns} FROM cards c JOIN accounts a ON a.id = c.account_id
    WHERE c.id = ${cardId} ${lock ? sql`FOR UPDATE OF a FOR SHARE OF c` : sql``}`.execute(db)
  if (rows.length === 0) return undefined
  const [row] = rows
  return {
    card: pick(row, 'card_', DECISION_CARD) as DecisionCard,
    account: pick(row, 'account_', DECISION_ACCOUNT) as DecisionAccount,
    versions: { card: row.card_version as string, account: row.account_version as string },
  }
}

export interface DecisionWrite {
  row: AuthorizationRow
  /** Approved: the hold to place, only while the card and account rows are still the versions the decision read. */
  hold: { entryId: string; versions: DecisionFacts['versions'] } | null
  /** The processor intent (a checked security code) marked succeeded with the write: `outcomeWithin(…, 'auth')`. */
  outcome: RawBuilder<unknown> | null
  /** `authorization.created`, written from the CTE `auth`. */
  event: EventWithin
}

/**
 * A decision in one statement, committed on its own or in the caller's transaction: for an approval the
 * hold (held balance, hold row, `hold` entry), then the authorization row, the processor outcome and
 * `authorization.created` with its deliveries. `written` false: an approval whose card or account changed
 * since it was read (or whose funds no longer cover it); nothing was written, decide again.
 */
export async function recordDecision(db: Db, w: DecisionWrite): Promise<{ written: boolean; notified: boolean }> {
  const { row } = w
  const values: Record<string, unknown> = {
    ...row, merchant: json(row.merchant), request_history: json(row.request_history),
  } satisfies Insertable<AuthorizationsTable>
  const columns = Object.keys(values)
  const hold = w.hold === null ? null : holdCtes({
    holdId: row.hold_id!, entryId: w.hold.entryId, accountId: row.account_id, amount: Number(row.held_amount), sourceId: row.id,
    expiresAt: row.expires_at as Date, now: row.created_at as Date,
  }, sql`xmin = ${w.hold.versions.account}::xid AND EXISTS (SELECT 1 FROM cards WHERE id = ${row.card_id} AND xmin = ${w.hold.versions.card}::xid)`)
  const { rows } = await sql<{ written: number; notified: number }>`
    WITH ${hold === null ? sql`` : sql`${hold},`}
    auth AS (
      INSERT INTO authorizations (${sql.join(columns.map((c) => sql.ref(c)))})
      SELECT ${sql.join(columns.map((c) => sql`${values[c]}`))} ${hold === null ? sql`` : sql`FROM acct`}
      RETURNING id
    ),
    ${w.outcome === null ? sql`` : sql`${w.outcome},`}
    ${w.event.ctes}
    SELECT (SELECT count(*) FROM auth)::int AS written, ${w.event.notified} AS notified`.execute(db)
  return { written: rows[0].written === 1, notified: Boolean(rows[0].notified) }
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
  // An authorization's id is never earlier than its created_at (newId('auth', now)), so the window's rows
  // are all at or above the lowest id of its start: the bound keeps the scan of `authorizations_card` to them.
  const { rows } = await sql<Record<WindowInterval, number>>`
    SELECT ${sql.join(columns)} FROM authorizations
    WHERE card_id = ${cardId} AND approved
    ${earliest ? sql`AND id >= ${lowestIdAt('auth', earliest)} AND created_at >= ${earliest}` : sql``}`.execute(db)
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
