import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Network tokens (wallet provisioning of a card). The authorization engine reads a token's status by
 * (id, card) on every tokenized authorization, hence the primary key lookup plus the card's own index.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE network_tokens (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      card_id text NOT NULL REFERENCES cards(id),
      program_id text NOT NULL,
      wallet text NOT NULL,
      status text NOT NULL,
      activated_at timestamptz,
      deleted_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX network_tokens_scope ON network_tokens (organization_id, environment, id DESC)`,
    `CREATE INDEX network_tokens_card ON network_tokens (card_id, id DESC)`,
  ])
}
