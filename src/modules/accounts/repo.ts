import { sql, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { json } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { AccountsTable } from './types.js'
import './types.js'

export type AccountRow = Selectable<AccountsTable>

export async function findAccount(db: Db, id: string): Promise<AccountRow | undefined> {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The account's owner and its program's capabilities, in one read (capability mounting runs on every call). */
export async function findAccountProgram(db: Db, id: string): Promise<{ organization_id: string; environment: string; capabilities: string[] } | undefined> {
  const { rows } = await sql<{ organization_id: string; environment: string; capabilities: string[] }>`
    SELECT a.organization_id, a.environment, p.capabilities
    FROM accounts a JOIN programs p ON p.id = a.program_id WHERE a.id = ${id}`.execute(db)
  return rows[0]
}

export interface AccountInsert {
  id: string
  organization_id: string
  environment: string
  program_id: string
  cardholder_id: string
  currency: string
  upstream_reference: string | null
  metadata: Record<string, string>
  now: Date
}

export async function insertAccount(db: Db, a: AccountInsert): Promise<AccountRow> {
  return db.insertInto('accounts').values({
    id: a.id, organization_id: a.organization_id, environment: a.environment, program_id: a.program_id,
    cardholder_id: a.cardholder_id, currency: a.currency, status: 'open', ledger_balance: 0, held_balance: 0, entry_seq: 0,
    upstream_reference: a.upstream_reference, block_reason: null, block_note: null,
    metadata: json(a.metadata) as never, created_at: a.now, updated_at: a.now,
  }).returningAll().executeTakeFirstOrThrow()
}

export interface AccountFilter {
  organizationId: string
  environment: string
  cardholderId?: string
  programId?: string
}

export async function listAccounts(db: Db, f: AccountFilter, bounds: PageBounds): Promise<AccountRow[]> {
  let q = db.selectFrom('accounts').selectAll().where('organization_id', '=', f.organizationId).where('environment', '=', f.environment)
  if (f.cardholderId !== undefined) q = q.where('cardholder_id', '=', f.cardholderId)
  if (f.programId !== undefined) q = q.where('program_id', '=', f.programId)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Sets the upstream reference once (the asynchronous creation finished); undefined when it was already set. */
export async function setUpstreamReference(db: Db, id: string, reference: string, now: Date): Promise<AccountRow | undefined> {
  return db.updateTable('accounts').set({ upstream_reference: reference, updated_at: now })
    .where('id', '=', id).where('upstream_reference', 'is', null).returningAll().executeTakeFirst()
}

/** Moves the status when it differs; undefined when the account already had it (nothing changed). */
export async function setStatus(db: Db, id: string, from: string, to: string, reason: string | null, note: string | null, now: Date): Promise<AccountRow | undefined> {
  return db.updateTable('accounts').set({ status: to, block_reason: reason, block_note: note, updated_at: now })
    .where('id', '=', id).where('status', '=', from).returningAll().executeTakeFirst()
}

/** True when the cardholder holds an account on a program whose processor takes address changes only through KYC. */
export async function cardholderHasKycAddressAccount(db: Db, cardholder: { id: string; organization_id: string; environment: string }): Promise<boolean> {
  const { rows } = await sql<{ one: number }>`
    SELECT 1 AS one FROM accounts a JOIN programs p ON p.id = a.program_id
    WHERE a.organization_id = ${cardholder.organization_id} AND a.environment = ${cardholder.environment}
      AND a.cardholder_id = ${cardholder.id} AND p.address_change_requires_kyc LIMIT 1`.execute(db)
  return rows.length > 0
}
