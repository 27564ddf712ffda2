import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Transactions: captures of authorizations and refunds (of a capture, or merchant-initiated). A refund
 * names the capture it returns money from in `original_transaction_id` (null for merchant refunds).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE transactions (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      program_id text NOT NULL,
      type text NOT NULL,
      status text NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      refunded_amount bigint NOT NULL DEFAULT 0 CHECK (refunded_amount >= 0 AND refunded_amount <= amount),
      currency text NOT NULL,
      authorization_id text,
      card_id text NOT NULL,
      account_id text NOT NULL,
      merchant jsonb NOT NULL,
      original_transaction_id text,
      reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      settled_at timestamptz
    )`,
    `CREATE INDEX transactions_scope ON transactions (organization_id, environment, id DESC)`,
    `CREATE INDEX transactions_card ON transactions (card_id, id DESC)`,
    `CREATE INDEX transactions_account ON transactions (account_id, id DESC)`,
    `CREATE INDEX transactions_authorization ON transactions (authorization_id) WHERE authorization_id IS NOT NULL`,
    `CREATE INDEX transactions_original ON transactions (original_transaction_id) WHERE original_transaction_id IS NOT NULL`,
    `CREATE INDEX transactions_pending ON transactions (created_at) WHERE status = 'pending'`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
