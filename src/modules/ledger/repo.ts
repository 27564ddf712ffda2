import { sql, type RawBuilder, type Selectable } from 'kysely'
import { createdInWindow, type CreatedWindow } from '../../db/created-window.js'
import type { Db } from '../../db/types.js'
import {
  ANSWER_RECORD_COLUMNS,
  answerItemFields,
  keyLookupCtes,
  STORED_RESULT,
  storeAnswersCte,
  type AnswerToStore,
} from '../../http/idempotent-answer.js'
import type { PageBounds } from '../../http/pagination.js'
import { newId } from '../../lib/ids.js'
import { type AccountRow, accountJson, availableBalanceSql } from '../accounts/index.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import { clockTimeSql } from '../clocks/index.js'
import { EVENT_ROW_COLUMNS, emitPerRow } from '../events/index.js'
import type { HoldsTable, LedgerEntriesTable } from './types.js'
import './types.js'

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
  clientTransactionId: string | null
  /** Advisory lock key of (account, client_transaction_id): held while the adjustment runs. */
  lockKey: [number, number] | null
  reference: string | null
  description: string | null
  /** The request's Idempotency-Key: its answer (the account as this adjustment left it) is stored with the entry. */
  answer: AnswerToStore | null
}

export type AdjustmentResult = {
  lock_ok: boolean
  /** False: the Idempotency-Key the statement was to lock (`answer.lock`) is held elsewhere; nothing written. */
  key_ok: boolean
  /** The answer already stored under that key (JSON, read with `storedOf`): nothing was written for it. */
  stored: unknown
  notified: number
  /** Not tried: an earlier adjustment of the same account in the batch was refused. Send it again. */
  deferred: boolean
} & (({ id: string } & AccountRow) | { id: null })

/**
 * Credits and debits in one statement, committed on its own (no explicit transaction), each applied or
 * refused as if the batch's adjustments ran one by one in order. The accounts' row locks are taken first, in
 * id order, so two batches never wait on each other in a circle. An account's adjustments apply in batch
 * order from its locked balances (running sums), as long as each keeps every rule (the caller's, open,
 * provisioned, same currency, funds or headroom, its client_transaction_id not in flight elsewhere): the
 * first that breaks one is refused and the account's later ones are `deferred`, for the caller to send
 * again. Each entry carries the balances after its own adjustment, and each event the account as that
 * adjustment left it, with its deliveries. Returns one result per input, in order: no account (`id` null)
 * means nothing was written for it (a refusal, which the caller explains from a fresh read, or a deferral);
 * `lock_ok` false means its client_transaction_id is in flight elsewhere. A client_transaction_id already
 * applied fails on the unique index, and the whole statement with it. An adjustment sent with an
 * Idempotency-Key (`answer`) stores its answer in the same statement, so the entry never commits without it;
 * when the statement is to lock the key itself (`answer.lock`), an adjustment whose key is held elsewhere
 * (`key_ok` false) or already answered (`stored`) writes nothing. An account whose cardholder is on a sandbox
 * clock (read in the statement, and only in the sandbox) is moved on the clock's time: its `updated_at` and its
 * entries' `created_at` are the clock's, and its events carry `clock_id` (docs/sandbox-clocks.md).
 */
export async function applyAdjustments(
  db: Db,
  batch: AdjustmentInput[],
  maxBalance: number,
  now: Date,
): Promise<AdjustmentResult[]> {
  const items = JSON.stringify(
    batch.map((a, idx) => ({
      idx,
      account_id: a.accountId,
      org: a.organizationId,
      env: a.environment,
      delta: a.delta,
      currency: a.currency,
      entry_id: a.entryId,
      event_id: newId('evt', now),
      entry_type: a.type,
      event_type: a.type === 'credit' ? 'account.credited' : 'account.debited',
      client_transaction_id: a.clientTransactionId,
      k1: a.lockKey?.[0] ?? null,
      k2: a.lockKey?.[1] ?? null,
      reference: a.reference,
      description: a.description,
      ...answerItemFields(a.answer),
    })),
  )
  const events = emitPerRow('applied', EVENT_ROW_COLUMNS, accountJson(), now)
  const { rows } = await sql<AdjustmentResult & { item: number }>`
    WITH input AS (
      SELECT * FROM json_to_recordset(${items}::json) AS i(idx int, account_id text, org text, env text, delta bigint, currency text,
        entry_id text, event_id text, entry_type text, event_type text, client_transaction_id text, k1 int, k2 int, reference text, description text,
        ${ANSWER_RECORD_COLUMNS})
    ),
    lk AS MATERIALIZED (
      SELECT idx, CASE WHEN k1 IS NULL THEN true ELSE pg_try_advisory_xact_lock(k1, k2) END AS ok FROM input
    ),
    ${keyLookupCtes('input')},
    tried AS MATERIALIZED (
      SELECT i.* FROM input AS i JOIN lk ON lk.idx = i.idx AND lk.ok JOIN key_locks AS kl ON kl.idx = i.idx AND kl.ok
      WHERE NOT EXISTS (SELECT 1 FROM key_stored AS ks WHERE ks.idx = i.idx)
    ),
    locked AS MATERIALIZED (
      SELECT id, organization_id, environment, currency, status, upstream_reference, ledger_balance, held_balance, entry_seq,
        CASE WHEN environment = 'sandbox' THEN ${clockOfCardholderSql(sql.ref('accounts.cardholder_id'))} END AS clock_id
      FROM accounts WHERE id = ANY(ARRAY(SELECT account_id FROM tried)) ORDER BY id FOR UPDATE
    ),
    steps AS MATERIALIZED (
      SELECT i.idx, i.account_id, i.delta, i.entry_id, i.event_id, i.entry_type, i.event_type, i.client_transaction_id, i.reference, i.description,
        l.clock_id, coalesce(CASE WHEN l.clock_id IS NOT NULL THEN ${clockTimeSql(sql.ref('l.clock_id'))} END, ${now}::timestamptz) AS at,
        i.idem_key, i.idem_method, i.idem_path, i.idem_hash, i.idem_status, l.ledger_balance AS ledger_before, l.entry_seq AS seq_before, (sum(i.delta) OVER w)::bigint AS run, row_number() OVER w AS k,
        (l.organization_id = i.org AND l.environment = i.env AND l.status = 'open' AND l.upstream_reference IS NOT NULL
          AND (i.currency IS NULL OR l.currency = i.currency)
          AND CASE WHEN i.delta < 0 THEN ${availableBalanceSql('l')} + sum(i.delta) OVER w >= 0
            ELSE l.ledger_balance + sum(i.delta) OVER w <= ${maxBalance}::bigint END) AS passes
      FROM tried AS i JOIN locked AS l ON l.id = i.account_id
      WINDOW w AS (PARTITION BY i.account_id ORDER BY i.idx)
    ),
    chain AS MATERIALIZED (
      SELECT s.*, (count(*) FILTER (WHERE NOT s.passes) OVER (PARTITION BY s.account_id ORDER BY s.idx)) - (NOT s.passes)::int AS refused_before
      FROM steps AS s
    ),
    totals AS MATERIALIZED (
      SELECT account_id, sum(delta)::bigint AS total, count(*) AS n, max(at) AS at FROM chain WHERE refused_before = 0 AND passes GROUP BY account_id
    ),
    acct AS (
      UPDATE accounts AS a SET ledger_balance = a.ledger_balance + t.total, entry_seq = a.entry_seq + t.n, updated_at = t.at
      FROM totals AS t
      WHERE a.id = ANY(ARRAY(SELECT account_id FROM totals)) AND a.id = t.account_id
      RETURNING a.*
    ),
    applied AS (
      SELECT c.idx, c.entry_id, c.event_id, c.entry_type, c.event_type, c.delta, c.clock_id, c.at,
        c.client_transaction_id AS entry_client_transaction_id, c.reference AS entry_reference, c.description AS entry_description,
        c.idem_key, c.idem_method, c.idem_path, c.idem_hash, c.idem_status, a.id, a.organization_id, a.environment, a.program_id, a.cardholder_id, a.currency, a.status,
        c.ledger_before + c.run AS ledger_balance, a.held_balance, c.seq_before + c.k AS entry_seq,
        a.upstream_reference, a.block_reason, a.block_note, a.metadata, a.created_at, a.updated_at
      FROM chain AS c JOIN acct AS a ON a.id = c.account_id
      WHERE c.refused_before = 0 AND c.passes
    ),
    ent AS (
      INSERT INTO ledger_entries (id, account_id, organization_id, environment, seq, type, amount, currency,
        ledger_balance_after, held_balance_after, available_balance_after, source_id, client_transaction_id, reference, description, created_at)
      SELECT entry_id, id, organization_id, environment, entry_seq, entry_type, delta, currency,
        ledger_balance, held_balance, ${availableBalanceSql()}, NULL, entry_client_transaction_id, entry_reference, entry_description, at
      FROM applied
    ),
    ${storeAnswersCte('applied', accountJson(), now)},
    ${events.ctes}
    SELECT lk.idx AS item, lk.ok AS lock_ok, kl.ok AS key_ok, ${STORED_RESULT},
      coalesce(c.refused_before > 0, false) AS deferred, ${events.notified} AS notified, ap.*
    FROM lk JOIN key_locks AS kl ON kl.idx = lk.idx LEFT JOIN key_stored AS ks ON ks.idx = lk.idx
      LEFT JOIN chain AS c ON c.idx = lk.idx LEFT JOIN applied AS ap ON ap.idx = lk.idx`.execute(db)
  const results: AdjustmentResult[] = new Array(batch.length)
  for (const row of rows) results[row.item] = row
  return results
}

export async function findEntryByClientTxn(
  db: Db,
  accountId: string,
  clientTransactionId: string,
): Promise<EntryRow | undefined> {
  return db
    .selectFrom('ledger_entries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('client_transaction_id', '=', clientTransactionId)
    .executeTakeFirst()
}

/** Takes the account's row lock for the rest of the transaction (holds and other movements). */
export async function lockAccount(trx: Db, accountId: string): Promise<AccountRow | undefined> {
  return trx
    .selectFrom('accounts')
    .selectAll()
    .where('id', '=', accountId)
    .forUpdate()
    .executeTakeFirst()
}

/** Takes the row lock of the account a hold is on (a hold never changes account), in one statement. */
export async function lockAccountOfHold(trx: Db, holdId: string): Promise<AccountRow | undefined> {
  return trx
    .selectFrom('accounts')
    .selectAll()
    .where('id', '=', (eb) => eb.selectFrom('holds').select('account_id').where('id', '=', holdId))
    .forUpdate()
    .executeTakeFirst()
}

export async function writeBalances(
  trx: Db,
  accountId: string,
  ledger: number,
  held: number,
  seq: number,
  now: Date,
): Promise<AccountRow> {
  return trx
    .updateTable('accounts')
    .set({ ledger_balance: ledger, held_balance: held, entry_seq: seq, updated_at: now })
    .where('id', '=', accountId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export async function insertEntries(trx: Db, entries: EntryRow[]): Promise<void> {
  await trx.insertInto('ledger_entries').values(entries).execute()
}

/** Entries of one account in ledger order (newest first), paged by their sequence number. */
export async function listEntries(
  db: Db,
  accountId: string,
  bounds: PageBounds,
): Promise<EntryRow[]> {
  let q = db.selectFrom('ledger_entries').selectAll().where('account_id', '=', accountId)
  if (bounds.after !== undefined) q = q.where('seq', '<', Number(bounds.after))
  if (bounds.before !== undefined) q = q.where('seq', '>', Number(bounds.before))
  return q
    .orderBy('seq', bounds.reverse ? 'asc' : 'desc')
    .limit(bounds.take)
    .execute()
}

export async function findHold(db: Db, holdId: string): Promise<HoldRow | undefined> {
  return db.selectFrom('holds').selectAll().where('id', '=', holdId).executeTakeFirst()
}

/** The holds `holdIds` of one account (a hold of another account, or none, is absent). */
export async function findHoldsOfAccount(
  db: Db,
  accountId: string,
  holdIds: readonly string[],
): Promise<HoldRow[]> {
  if (holdIds.length === 0) return []
  return db
    .selectFrom('holds')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', sql<string>`ANY(${[...holdIds]}::text[])`)
    .execute()
}

/**
 * Closes holds in one statement: nothing left, `released` as given, `updated_at` each its own time. The holds are
 * found by their ids (`= ANY`): joined to the items alone, which the planner takes for a hundred rows, the plan hashed
 * them against a sequential scan of every hold.
 */
export async function closeHolds(
  trx: Db,
  holds: readonly { id: string; released: number; at: Date }[],
): Promise<void> {
  if (holds.length === 0) return
  const items = JSON.stringify(holds)
  await sql`
    UPDATE holds AS h SET remaining = 0, released = u.released, status = 'closed', updated_at = u.at
    FROM json_to_recordset(${items}::json) AS u(id text, released bigint, at timestamptz)
    WHERE h.id = u.id AND h.id = ANY (${holds.map((h) => h.id)}::text[])`.execute(trx)
}

export async function updateHold(
  trx: Db,
  holdId: string,
  changes: Partial<
    Pick<HoldRow, 'amount' | 'remaining' | 'captured' | 'released' | 'status' | 'updated_at'>
  >,
): Promise<HoldRow> {
  return trx
    .updateTable('holds')
    .set(changes)
    .where('id', '=', holdId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Sum of what open holds still hold on the account (the invariant held_balance must equal). */
export async function sumOpenHolds(db: Db, accountId: string): Promise<number> {
  const row = await db
    .selectFrom('holds')
    .select((eb) => eb.fn.coalesce(eb.fn.sum<number>('remaining'), sql<number>`0`).as('n'))
    .where('account_id', '=', accountId)
    .where('status', '=', 'open')
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}

/**
 * The ledger's first step for statements that decide on many accounts at once (batched authorization
 * decisions): a common table expression `name` with the accounts whose ids `ids` selects: id, status,
 * currency, balances, the available balance and the row's version (`xmin`). `lock`: their row locks are
 * taken, in id order (two batches never wait on each other in a circle), for the rest of the transaction.
 */
export function accountsCte(
  name: string,
  ids: RawBuilder<unknown>,
  lock: boolean,
): RawBuilder<unknown> {
  return sql`${sql.id(name)} AS MATERIALIZED (
      SELECT id, status, currency, ledger_balance, held_balance, ${availableBalanceSql()} AS available, xmin::text AS version
      FROM accounts WHERE id = ANY(ARRAY(${ids})) ${lock ? sql`ORDER BY id FOR UPDATE` : sql``}
    )`
}

/**
 * New holds as common table expressions, for a statement that also writes what they are for (batched
 * authorization decisions). `source` is a CTE of the holds to place, one row each with idx, account_id,
 * amount, hold_id, entry_id, source_id, expires_at and at; its accounts must already be locked by the
 * statement and their checks passed. `acct` raises each account's held balance once by its holds' total,
 * then every hold and its `hold` entry are written, an account's holds in idx order, each entry with the
 * balances right after its own hold.
 */
export function holdsCtes(source: string, now: Date): RawBuilder<unknown> {
  return sql`hold_steps AS MATERIALIZED (
      SELECT s.*, (sum(s.amount) OVER w)::bigint AS run, row_number() OVER w AS k
      FROM ${sql.table(source)} AS s WINDOW w AS (PARTITION BY s.account_id ORDER BY s.idx)
    ),
    hold_totals AS MATERIALIZED (
      SELECT account_id, sum(amount)::bigint AS total, count(*)::int AS n FROM hold_steps GROUP BY account_id
    ),
    acct AS (
      UPDATE accounts AS a SET held_balance = a.held_balance + t.total, entry_seq = a.entry_seq + t.n, updated_at = ${now}
      FROM hold_totals AS t
      WHERE a.id = ANY(ARRAY(SELECT account_id FROM hold_totals)) AND a.id = t.account_id
      RETURNING a.id, a.organization_id, a.environment, a.currency, a.ledger_balance, a.held_balance - t.total AS held_before, a.entry_seq - t.n AS seq_before
    ),
    held AS (
      SELECT s.idx, s.hold_id, s.entry_id, s.source_id, s.amount, s.expires_at, s.at, a.id AS account_id, a.organization_id, a.environment,
        a.currency, a.ledger_balance, a.held_before + s.run AS held_balance, a.seq_before + s.k AS seq
      FROM hold_steps AS s JOIN acct AS a ON a.id = s.account_id
    ),
    hold AS (
      INSERT INTO holds (id, account_id, organization_id, environment, source_id, currency, amount, remaining, captured, released, status, expires_at, created_at, updated_at)
      SELECT hold_id, account_id, organization_id, environment, source_id, currency, amount, amount, 0, 0, 'open', expires_at, at, at
      FROM held
    ),
    hold_entry AS (
      INSERT INTO ledger_entries (id, account_id, organization_id, environment, seq, type, amount, currency,
        ledger_balance_after, held_balance_after, available_balance_after, source_id, client_transaction_id, reference, description, created_at)
      SELECT entry_id, account_id, organization_id, environment, seq, 'hold', -amount, currency,
        ledger_balance, held_balance, ${availableBalanceSql()}, coalesce(source_id, hold_id), NULL, NULL, NULL, at
      FROM held
    )`
}

/** One hold to place through `holdsCtes`: its account's row lock is held and its checks have passed. */
export interface HoldToPlace {
  accountId: string
  amount: number
  holdId: string
  entryId: string
  sourceId: string | null
  expiresAt: Date | null
}

/** Places holds by the same plan the batched decisions splice in (`holdsCtes`), as a statement of its own. */
export async function placeHolds(trx: Db, holds: HoldToPlace[], now: Date): Promise<void> {
  const source = JSON.stringify(
    holds.map((h, idx) => ({
      idx,
      account_id: h.accountId,
      amount: h.amount,
      hold_id: h.holdId,
      entry_id: h.entryId,
      source_id: h.sourceId,
      expires_at: h.expiresAt,
      at: now,
    })),
  )
  await sql`WITH to_place AS (
      SELECT * FROM json_to_recordset(${source}::json)
        AS s(idx int, account_id text, amount bigint, hold_id text, entry_id text, source_id text, expires_at timestamptz, at timestamptz)
    ),
    ${holdsCtes('to_place', now)}
    SELECT 1`.execute(trx)
}

/** Ledger entries of the organization's accounts by creation time, oldest first, one keyset batch (reports). */
export async function entriesCreatedIn(db: Db, w: CreatedWindow): Promise<EntryRow[]> {
  return createdInWindow(db.selectFrom('ledger_entries').selectAll(), w).execute()
}
