import { sql, type RawBuilder, type Selectable } from 'kysely'
import { createdInWindow, type CreatedWindow } from '../../db/created-window.js'
import type { Db } from '../../db/types.js'
import type { PageBounds } from '../../http/pagination.js'
import type { AccountRow } from '../accounts/service.js'
import { accountJson } from '../accounts/present.js'
import { emitPerRow } from '../events/emit.js'
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
  eventId: string
  type: 'credit' | 'debit'
  /** Signed change of the ledger balance. */
  delta: number
  /** Currency the caller named, or null. */
  currency: string | null
  clientTransactionId: string | null
  /** Advisory lock key of (account, client_transaction_id): held while the adjustment runs. */
  lockKey: [number, number] | null
  reference: string | null
  description: string | null
}

export type AdjustmentResult = { lock_ok: boolean; notified: number } & ({ id: string } & AccountRow | { id: null })

/**
 * Credits and debits of distinct accounts in one statement, committed on its own (no explicit transaction);
 * each applies or not on its own terms. The accounts' row locks are taken first, in id order, so two batches
 * never wait on each other in a circle; then the conditional UPDATE applies an adjustment only when every
 * rule holds (open, provisioned, same currency, funds or headroom, its client_transaction_id not in flight);
 * each entry is written from its updated row, so balance and ledger can never disagree, and each account's
 * event and its deliveries from the same row. Returns one result per input, in order: no account (`id`
 * null) means a rule failed and nothing was written for it (the caller finds out which); `lock_ok` false
 * means its client_transaction_id is in flight elsewhere. A client_transaction_id already applied fails on
 * the unique index, and the whole statement with it.
 */
export async function applyAdjustments(db: Db, batch: AdjustmentInput[], maxBalance: number, now: Date): Promise<AdjustmentResult[]> {
  const items = JSON.stringify(batch.map((a, idx) => ({
    idx, account_id: a.accountId, org: a.organizationId, env: a.environment, delta: a.delta, currency: a.currency,
    entry_id: a.entryId, event_id: a.eventId, entry_type: a.type, event_type: a.type === 'credit' ? 'account.credited' : 'account.debited',
    client_transaction_id: a.clientTransactionId, k1: a.lockKey?.[0] ?? null, k2: a.lockKey?.[1] ?? null,
    reference: a.reference, description: a.description,
  })))
  const events = emitPerRow('acct', { id: 'event_id', organizationId: 'organization_id', environment: 'environment', type: 'event_type' }, accountJson(), now)
  const { rows } = await sql<AdjustmentResult & { item: number }>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${items}::json) AS i(idx int, account_id text, org text, env text, delta bigint, currency text,
        entry_id text, event_id text, entry_type text, event_type text, client_transaction_id text, k1 int, k2 int, reference text, description text)
    ),
    lk AS MATERIALIZED (
      SELECT idx, CASE WHEN k1 IS NULL THEN true ELSE pg_try_advisory_xact_lock(k1, k2) END AS ok FROM input
    ),
    locked AS MATERIALIZED (
      SELECT id FROM accounts WHERE id = ANY(ARRAY(SELECT account_id FROM input)) ORDER BY id FOR UPDATE
    ),
    acct AS (
      UPDATE accounts AS a SET ledger_balance = a.ledger_balance + i.delta, entry_seq = a.entry_seq + 1, updated_at = ${now}
      FROM input AS i JOIN lk ON lk.idx = i.idx
      WHERE a.id = ANY(ARRAY(SELECT id FROM locked)) AND a.id = i.account_id
        AND a.organization_id = i.org AND a.environment = i.env
        AND a.status = 'open' AND a.upstream_reference IS NOT NULL
        AND (i.currency IS NULL OR a.currency = i.currency)
        AND CASE WHEN i.delta < 0 THEN a.ledger_balance - a.held_balance + i.delta >= 0 ELSE a.ledger_balance + i.delta <= ${maxBalance}::bigint END
        AND lk.ok
      RETURNING a.*, i.idx, i.entry_id, i.event_id, i.entry_type, i.event_type, i.delta,
        i.client_transaction_id AS entry_client_transaction_id, i.reference AS entry_reference, i.description AS entry_description
    ),
    ent AS (
      INSERT INTO ledger_entries (id, account_id, organization_id, environment, seq, type, amount, currency,
        ledger_balance_after, held_balance_after, available_balance_after, source_id, client_transaction_id, reference, description, created_at)
      SELECT entry_id, id, organization_id, environment, entry_seq, entry_type, delta, currency,
        ledger_balance, held_balance, ledger_balance - held_balance, NULL, entry_client_transaction_id, entry_reference, entry_description, ${now}
      FROM acct
    ),
    ${events.ctes}
    SELECT lk.idx AS item, lk.ok AS lock_ok, ${events.notified} AS notified, acct.*
    FROM lk LEFT JOIN acct ON acct.idx = lk.idx`.execute(db)
  const results: AdjustmentResult[] = new Array(batch.length)
  for (const row of rows) results[row.item] = row
  return results
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
