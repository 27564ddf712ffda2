import { sql, type RawBuilder, type Selectable } from 'kysely'
import { createdInWindow, type CreatedWindow } from '../../db/created-window.js'
import type { Db } from '../../db/types.js'
import type { PageBounds } from '../../http/pagination.js'
import type { AccountRow } from '../accounts/service.js'
import type { EventWithin } from '../events/emit.js'
import type { HoldsTable, LedgerEntriesTable } from './types.js'
import './types.js'
import '../accounts/types.js'

export type EntryRow = Selectable<LedgerEntriesTable>
export type HoldRow = Selectable<HoldsTable>

/** The unique index that decides which request applies a client_transaction_id. */
export const CLIENT_TXN_CONSTRAINT = 'ledger_entries_client_txn'

export interface AdjustmentInput {
  accountId: string
  organizationId: string
  environment: string
  entryId: string
  type: 'credit' | 'debit'
  /** Signed change of the ledger balance. */
  delta: number
  /** Currency the caller named, or null. */
  currency: string | null
  /** Credits may not take the ledger balance above this. */
  maxBalance: number
  clientTransactionId: string | null
  /** Advisory lock key of (account, client_transaction_id): held while the adjustment runs. */
  lockKey: [number, number] | null
  reference: string | null
  description: string | null
  now: Date
}

export type AdjustmentResult = { lock_ok: boolean; entry_id: string | null; notified: number } & ({ id: string } & AccountRow | { id: null })

/**
 * A credit or debit in one statement, committed on its own (no explicit transaction): the conditional
 * UPDATE takes the account's row lock and applies the change only when every rule holds (open,
 * provisioned, same currency, funds or headroom); the entry is written from the updated row, so balance
 * and ledger can never disagree; `event` (from `emitWithin` over `acct`) writes the account's event and
 * queues its deliveries from the same row. No row back means a rule failed (the caller finds out which)
 * and nothing was written; `lock_ok` false means the same client_transaction_id is in flight elsewhere.
 * A client_transaction_id already applied fails on the unique index, and the whole statement with it.
 */
export async function applyAdjustment(db: Db, a: AdjustmentInput, event: EventWithin): Promise<AdjustmentResult> {
  const lock = a.lockKey ? sql`pg_try_advisory_xact_lock(${a.lockKey[0]}::int, ${a.lockKey[1]}::int)` : sql`true`
  const funds = a.delta < 0
    ? sql`ledger_balance - held_balance + ${a.delta}::bigint >= 0`
    : sql`ledger_balance + ${a.delta}::bigint <= ${a.maxBalance}::bigint`
  const { rows } = await sql<AdjustmentResult>`
    WITH lk AS (SELECT ${lock} AS ok),
    acct AS (
      UPDATE accounts SET ledger_balance = ledger_balance + ${a.delta}::bigint, entry_seq = entry_seq + 1, updated_at = ${a.now}
      WHERE id = ${a.accountId} AND organization_id = ${a.organizationId} AND environment = ${a.environment}
        AND status = 'open' AND upstream_reference IS NOT NULL
        AND (${a.currency}::text IS NULL OR currency = ${a.currency}::text)
        AND ${funds}
        AND (SELECT ok FROM lk)
      RETURNING *
    ),
    ent AS (
      INSERT INTO ledger_entries (id, account_id, organization_id, environment, seq, type, amount, currency,
        ledger_balance_after, held_balance_after, available_balance_after, source_id, client_transaction_id, reference, description, created_at)
      SELECT ${a.entryId}, id, organization_id, environment, entry_seq, ${a.type}, ${a.delta}::bigint, currency,
        ledger_balance, held_balance, ledger_balance - held_balance, NULL, ${a.clientTransactionId}::text, ${a.reference}::text, ${a.description}::text, ${a.now}
      FROM acct
      RETURNING id
    ),
    ${event.ctes}
    SELECT (SELECT ok FROM lk) AS lock_ok, (SELECT id FROM ent) AS entry_id, ${event.notified} AS notified, acct.*
    FROM (SELECT 1) AS one LEFT JOIN acct ON true`.execute(db)
  return rows[0]
}

export async function findEntryByClientTxn(db: Db, accountId: string, clientTransactionId: string): Promise<EntryRow | undefined> {
  return db.selectFrom('ledger_entries').selectAll()
    .where('account_id', '=', accountId).where('client_transaction_id', '=', clientTransactionId).executeTakeFirst()
}

/** Takes the account's row lock for the rest of the transaction (holds and other movements). */
export async function lockAccount(trx: Db, accountId: string): Promise<AccountRow | undefined> {
  return trx.selectFrom('accounts').selectAll().where('id', '=', accountId).forUpdate().executeTakeFirst()
}

export async function writeBalances(trx: Db, accountId: string, ledger: number, held: number, seq: number, now: Date): Promise<AccountRow> {
  return trx.updateTable('accounts').set({ ledger_balance: ledger, held_balance: held, entry_seq: seq, updated_at: now })
    .where('id', '=', accountId).returningAll().executeTakeFirstOrThrow()
}

export async function insertEntry(trx: Db, entry: EntryRow): Promise<void> {
  await trx.insertInto('ledger_entries').values(entry).execute()
}

/** Entries of one account in ledger order (newest first), paged by their sequence number. */
export async function listEntries(db: Db, accountId: string, bounds: PageBounds): Promise<EntryRow[]> {
  let q = db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId)
  if (bounds.after !== undefined) q = q.where('seq', '<', Number(bounds.after))
  if (bounds.before !== undefined) q = q.where('seq', '>', Number(bounds.before))
  return q.orderBy('seq', bounds.reverse ? 'asc' : 'desc').limit(bounds.take).execute()
}

export async function insertHold(trx: Db, hold: HoldRow): Promise<HoldRow> {
  return trx.insertInto('holds').values(hold).returningAll().executeTakeFirstOrThrow()
}

export async function findHold(db: Db, holdId: string): Promise<HoldRow | undefined> {
  return db.selectFrom('holds').selectAll().where('id', '=', holdId).executeTakeFirst()
}

export async function updateHold(trx: Db, holdId: string, changes: Partial<Pick<HoldRow, 'amount' | 'remaining' | 'captured' | 'released' | 'status' | 'updated_at'>>): Promise<HoldRow> {
  return trx.updateTable('holds').set(changes).where('id', '=', holdId).returningAll().executeTakeFirstOrThrow()
}

/** Sum of what open holds still hold on the account (the invariant held_balance must equal). */
export async function sumOpenHolds(db: Db, accountId: string): Promise<number> {
  const row = await db.selectFrom('holds').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('remaining'), sql<number>`0`).as('n'))
    .where('account_id', '=', accountId).where('status', '=', 'open').executeTakeFirst()
  return Number(row?.n ?? 0)
}

export interface HoldStatementInput {
  holdId: string
  entryId: string
  accountId: string
  amount: number
  sourceId: string | null
  expiresAt: Date | null
  now: Date
}

/**
 * A new hold as common table expressions, for a statement that also writes what the hold is for (the
 * authorization hot path): `acct` raises the held balance (only while the account is open and its
 * available balance covers the amount, and `guard`, a condition on the account's row, holds), then
 * `hold` and its `hold` entry are written from it. Nothing is written when `acct` matched no row.
 */
export function holdCtes(h: HoldStatementInput, guard: RawBuilder<unknown> = sql`true`): RawBuilder<unknown> {
  return sql`acct AS (
      UPDATE accounts SET held_balance = held_balance + ${h.amount}::bigint, entry_seq = entry_seq + 1, updated_at = ${h.now}
      WHERE id = ${h.accountId} AND status = 'open' AND ledger_balance - held_balance >= ${h.amount}::bigint AND ${guard}
      RETURNING id, organization_id, environment, currency, ledger_balance, held_balance, entry_seq
    ),
    hold AS (
      INSERT INTO holds (id, account_id, organization_id, environment, source_id, currency, amount, remaining, captured, released, status, expires_at, created_at, updated_at)
      SELECT ${h.holdId}, id, organization_id, environment, ${h.sourceId}::text, currency, ${h.amount}::bigint, ${h.amount}::bigint, 0, 0, 'open', ${h.expiresAt}::timestamptz, ${h.now}, ${h.now}
      FROM acct
    ),
    hold_entry AS (
      INSERT INTO ledger_entries (id, account_id, organization_id, environment, seq, type, amount, currency,
        ledger_balance_after, held_balance_after, available_balance_after, source_id, client_transaction_id, reference, description, created_at)
      SELECT ${h.entryId}, id, organization_id, environment, entry_seq, 'hold', ${-h.amount}::bigint, currency,
        ledger_balance, held_balance, ledger_balance - held_balance, coalesce(${h.sourceId}::text, ${h.holdId}), NULL, NULL, NULL, ${h.now}
      FROM acct
    )`
}

/** Ledger entries of the organization's accounts by creation time, oldest first, one keyset batch (reports). */
export async function entriesCreatedIn(db: Db, w: CreatedWindow): Promise<EntryRow[]> {
  return createdInWindow(db.selectFrom('ledger_entries').selectAll(), w).execute()
}
