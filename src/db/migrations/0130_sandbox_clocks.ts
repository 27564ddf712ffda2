import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Sandbox clocks (docs/sandbox-clocks.md): a clock per test, the cardholders that read it (`clock_id`; their
 * cards, accounts and authorizations follow it through their cardholder) and the clock an event was emitted
 * under. `advancing_to` is the target of an advance not yet finished (status `advancing`): the worker or the next
 * call finishes it. A deleted clock keeps its row (`deleted_at`) so its cardholders keep naming it.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE sandbox_clocks (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      name text,
      frozen_time timestamptz NOT NULL,
      status text NOT NULL,
      advancing_to timestamptz,
      deletes_after timestamptz NOT NULL,
      deleted_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX sandbox_clocks_scope ON sandbox_clocks (organization_id, environment, id DESC)
      WHERE deleted_at IS NULL`,
    `CREATE INDEX sandbox_clocks_advancing ON sandbox_clocks (updated_at) WHERE status = 'advancing'`,
    'ALTER TABLE cardholders ADD COLUMN clock_id text',
    'CREATE INDEX cardholders_clock ON cardholders (clock_id) WHERE clock_id IS NOT NULL',
    'ALTER TABLE events ADD COLUMN clock_id text',
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
