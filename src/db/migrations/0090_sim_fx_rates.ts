import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Rates an organization pinned for its sandbox (`PUT /v1/simulate/fx_rates/{base}/{quote}`): the simulated processors
 * convert at a pinned rate before the built-in table's (processors, `sandbox-fx.ts`). One row per direction
 * (base → quote); `rate` is the canonical decimal text (quote per base), never a float. Read by its primary key only.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE sim_fx_rates (
      organization_id text NOT NULL,
      environment text NOT NULL,
      base text NOT NULL,
      quote text NOT NULL,
      rate text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, environment, base, quote),
      CHECK (base <> quote)
    )`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
