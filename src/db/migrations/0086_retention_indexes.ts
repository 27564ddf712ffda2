import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * The indexes the retention purges walk (docs/retention.md): each purge selects a bounded batch of rows past
 * retention through an index, so a statement reads only what it deletes, never the whole table.
 *
 * - `jobs_dead`: dead jobs by when they were given up. Partial: only dead rows are in it, so claiming, rescheduling
 *   and finishing queued jobs never write to it.
 * - `esim_h5_links_expiry`: links by expiry (purged a week after it).
 * - `console_sessions_created`: sessions past their absolute limit, or left at the second factor, by creation
 *   (idle ones already have `console_sessions_last_seen`).
 * - `console_sign_in_failures_at`: failures by time; `console_sign_in_failures_key` starts with the key, so it
 *   cannot answer "older than the window" for every key at once.
 *
 * The other purges had theirs already: `idempotency_keys_created`, `oauth_jtis_expiry`, `access_tokens_expiry`,
 * `user_invitations_expiry`, `card_pin_keys_expiry`, and the primary keys of `events` and
 * `authorization_endpoint_attempts` (ids sort by creation time).
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE INDEX jobs_dead ON jobs (updated_at) WHERE state = 'dead'`,
    `CREATE INDEX esim_h5_links_expiry ON esim_h5_links (expires_at)`,
    `CREATE INDEX console_sessions_created ON console_sessions (created_at)`,
    `CREATE INDEX console_sign_in_failures_at ON console_sign_in_failures (at)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
