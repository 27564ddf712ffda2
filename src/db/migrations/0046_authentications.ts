import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * 3-D Secure out-of-band authentications. `authentications_pending_expiry` serves the sweep that marks
 * pending challenges expired once their five minutes have passed.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE authentications (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      card_id text NOT NULL REFERENCES cards(id),
      program_id text NOT NULL,
      amount bigint NOT NULL,
      currency text NOT NULL,
      merchant jsonb NOT NULL,
      status text NOT NULL,
      expires_at timestamptz NOT NULL,
      decided_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX authentications_scope ON authentications (organization_id, environment, id DESC)`,
    `CREATE INDEX authentications_card ON authentications (card_id, id DESC)`,
    `CREATE INDEX authentications_pending_expiry ON authentications (organization_id, environment, expires_at) WHERE status = 'pending'`,
  ])
}
