import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Hosted card details (docs/cards.md, "Hosted card details"): a reveal session is a single-use page for an iframe
 * on one origin. Only the SHA-256 of its token is kept (`card_reveal_sessions_token`, unique), so a database read
 * never yields a usable URL; `used_at` is set by the first view, atomically (`WHERE used_at IS NULL`). The card
 * number is never stored: the page reads it from the processor when it is viewed. `fields` is the JSON array of
 * `number`, `cvc`, `expiry` the page shows. Sessions are purged a day after they expire
 * (`card_reveal_sessions_expiry`).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE card_reveal_sessions (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      card_id text NOT NULL REFERENCES cards(id),
      client_id text NOT NULL,
      token_hash text NOT NULL,
      target_origin text NOT NULL,
      fields jsonb NOT NULL,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL
    )`,
    `CREATE UNIQUE INDEX card_reveal_sessions_token ON card_reveal_sessions (token_hash)`,
    `CREATE INDEX card_reveal_sessions_expiry ON card_reveal_sessions (expires_at)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
