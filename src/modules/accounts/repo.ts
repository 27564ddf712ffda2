import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import { clockOfCardholderSql } from '../cardholders/index.js'
import type { AccountsTable } from './types.js'
import './types.js'

export type AccountRow = Selectable<AccountsTable>

export async function findAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The account with the sandbox clock of its cardholder (null: none), read in the same statement. */
export async function findAccountWithClock(
  db: Db,
  id: string,
): Promise<(AccountRow & { clock_id: string | null }) | undefined> {
  return db
    .selectFrom('accounts')
    .selectAll()
    .select(
      sql<string | null>`${clockOfCardholderSql(sql.ref('accounts.cardholder_id'))}`.as('clock_id'),
    )
    .where('id', '=', id)
    .executeTakeFirst()
}

/** A new account's columns as the caller chooses them; the rest start as an open, empty account at `now`. */
export type AccountInsert = Pick<
  AccountRow,
  | 'id'
  | 'organization_id'
  | 'environment'
  | 'program_id'
  | 'cardholder_id'
  | 'currency'
  | 'upstream_reference'
  | 'metadata'
> & { now: Date }

export async function insertAccount(db: Db, a: AccountInsert): Promise<AccountRow> {
  return db
    .insertInto('accounts')
    .values({
      id: a.id,
      organization_id: a.organization_id,
      environment: a.environment,
      program_id: a.program_id,
      cardholder_id: a.cardholder_id,
      currency: a.currency,
      status: 'open',
      ledger_balance: 0,
      held_balance: 0,
      entry_seq: 0,
      upstream_reference: a.upstream_reference,
      block_reason: null,
      block_note: null,
      metadata: json(a.metadata) as never,
      created_at: a.now,
      updated_at: a.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface AccountFilter {
  organizationId: string
  environment: string
  cardholderId?: string
  programId?: string
}

export async function listAccounts(
  db: Db,
  f: AccountFilter,
  bounds: PageBounds,
): Promise<AccountRow[]> {
  let q = db
    .selectFrom('accounts')
    .selectAll()
    .where('organization_id', '=', f.organizationId)
    .where('environment', '=', f.environment)
  if (f.cardholderId !== undefined) q = q.where('cardholder_id', '=', f.cardholderId)
  if (f.programId !== undefined) q = q.where('program_id', '=', f.programId)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Sets the upstream reference once (the asynchronous creation finished); undefined when it was already set. */
export async function setUpstreamReference(
  db: Db,
  id: string,
  reference: string,
  now: Date,
): Promise<AccountRow | undefined> {
  return db
    .updateTable('accounts')
    .set({ upstream_reference: reference, updated_at: now })
    .where('id', '=', id)
    .where('upstream_reference', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

/** Moves the status when it differs; undefined when the account already had it (nothing changed). */
export async function setStatus(
  db: Db,
  id: string,
  from: string,
  to: string,
  reason: string | null,
  note: string | null,
  now: Date,
): Promise<AccountRow | undefined> {
  return db
    .updateTable('accounts')
    .set({ status: to, block_reason: reason, block_note: note, updated_at: now })
    .where('id', '=', id)
    .where('status', '=', from)
    .returningAll()
    .executeTakeFirst()
}

/** The programs the cardholder holds accounts on (each once). */
export async function cardholderProgramIds(
  db: Db,
  cardholder: { id: string; organization_id: string; environment: string },
): Promise<string[]> {
  const rows = await db
    .selectFrom('accounts')
    .select('program_id')
    .distinct()
    .where('organization_id', '=', cardholder.organization_id)
    .where('environment', '=', cardholder.environment)
    .where('cardholder_id', '=', cardholder.id)
    .execute()
  return rows.map((r) => r.program_id)
}
