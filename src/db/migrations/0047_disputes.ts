import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Disputes of settled capture transactions. `disputes_one_open` lets exactly one dispute per transaction
 * be open (submitted or under review) even when two requests race.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE disputes (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      transaction_id text NOT NULL,
      card_id text NOT NULL,
      account_id text NOT NULL,
      program_id text NOT NULL,
      amount bigint NOT NULL,
      currency text NOT NULL,
      reason text NOT NULL,
      evidence jsonb,
      status text NOT NULL,
      resolved_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX disputes_scope ON disputes (organization_id, environment, id DESC)`,
    `CREATE INDEX disputes_transaction ON disputes (transaction_id, id DESC)`,
    `CREATE UNIQUE INDEX disputes_one_open ON disputes (transaction_id) WHERE status IN ('submitted', 'under_review')`,
  ])
}
