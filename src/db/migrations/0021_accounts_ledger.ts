import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Accounts with their balances, the append-only ledger and authorization holds.
 * `entry_seq` numbers each account's entries in the order the row lock granted them, so the
 * ledger reads back in exactly the order balances moved. Accounts leave room on each page so balance
 * updates (no indexed column changes) stay heap-only.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE accounts (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      program_id text NOT NULL REFERENCES programs(id),
      cardholder_id text NOT NULL,
      currency text NOT NULL,
      status text NOT NULL DEFAULT 'open',
      ledger_balance bigint NOT NULL DEFAULT 0,
      held_balance bigint NOT NULL DEFAULT 0 CHECK (held_balance >= 0),
      entry_seq bigint NOT NULL DEFAULT 0,
      upstream_reference text,
      block_reason text,
      block_note text,
      metadata jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    ) WITH (fillfactor = 70)`,
    `CREATE INDEX accounts_scope ON accounts (organization_id, environment, id DESC)`,
    `CREATE INDEX accounts_cardholder ON accounts (organization_id, environment, cardholder_id, id DESC)`,
    `CREATE INDEX accounts_program ON accounts (organization_id, environment, program_id, id DESC)`,
    `CREATE TABLE ledger_entries (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      organization_id text NOT NULL,
      environment text NOT NULL,
      seq bigint NOT NULL,
      type text NOT NULL,
      amount bigint NOT NULL,
      currency text NOT NULL,
      ledger_balance_after bigint NOT NULL,
      held_balance_after bigint NOT NULL,
      available_balance_after bigint NOT NULL,
      source_id text,
      client_transaction_id text,
      reference text,
      description text,
      created_at timestamptz NOT NULL
    )`,
    `CREATE UNIQUE INDEX ledger_entries_account_seq ON ledger_entries (account_id, seq)`,
    `CREATE UNIQUE INDEX ledger_entries_client_txn ON ledger_entries (account_id, client_transaction_id) WHERE client_transaction_id IS NOT NULL`,
    `CREATE INDEX ledger_entries_source ON ledger_entries (source_id) WHERE source_id IS NOT NULL`,
    `CREATE TABLE holds (
      id text PRIMARY KEY,
      account_id text NOT NULL REFERENCES accounts(id),
      organization_id text NOT NULL,
      environment text NOT NULL,
      source_id text,
      currency text NOT NULL,
      amount bigint NOT NULL CHECK (amount > 0),
      remaining bigint NOT NULL CHECK (remaining >= 0),
      captured bigint NOT NULL DEFAULT 0,
      released bigint NOT NULL DEFAULT 0,
      status text NOT NULL,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX holds_account_open ON holds (account_id) WHERE status = 'open'`,
    `CREATE INDEX holds_source ON holds (source_id) WHERE source_id IS NOT NULL`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
