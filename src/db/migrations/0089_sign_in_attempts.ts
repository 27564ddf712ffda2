import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Console sign-in limits reserve each attempt before checking it (users module, `attempts.ts`): the attempt's rows
 * are written first, one per limit it counts against, then counted; an attempt refused by a limit, or found right,
 * takes its rows back, and a wrong one leaves them as its failures. `attempt` names the rows of one attempt (null
 * on rows written before: failures, never taken back). Deleting them goes through `console_sign_in_failures_key`
 * (key, at), so no index is added.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [`ALTER TABLE console_sign_in_failures ADD COLUMN attempt text`])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
