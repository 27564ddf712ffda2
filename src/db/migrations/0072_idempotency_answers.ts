import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * An Idempotency-Key row is now written only with its answer, in the transaction (or statement) of the effect
 * it answers; "still running" is a lock that dies with its holder, not a row with a time-to-live. Rows left in
 * progress by earlier versions are dropped (their requests are long gone), with the columns that served them.
 * `response_json` holds an answer a batched statement wrote itself (an account or an authorization, never a
 * secret), beside the encrypted `response_body` of every other answer.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `DELETE FROM idempotency_keys WHERE state <> 'complete'`,
    `ALTER TABLE idempotency_keys DROP COLUMN state`,
    `ALTER TABLE idempotency_keys DROP COLUMN locked_until`,
    `ALTER TABLE idempotency_keys ADD COLUMN response_json json`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
