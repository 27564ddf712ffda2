import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE events (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      type text NOT NULL,
      api_version text NOT NULL,
      data jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX events_scope ON events (organization_id, environment, id DESC)`,
    `CREATE INDEX events_scope_type ON events (organization_id, environment, type, id DESC)`,
    `CREATE INDEX events_created ON events (created_at)`,
    `CREATE TABLE jobs (
      id text PRIMARY KEY,
      type text NOT NULL,
      payload jsonb NOT NULL,
      organization_id text,
      environment text,
      state text NOT NULL DEFAULT 'queued',
      run_at timestamptz NOT NULL DEFAULT now(),
      attempts integer NOT NULL DEFAULT 0,
      locked_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX jobs_due ON jobs (run_at) WHERE state = 'queued'`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
