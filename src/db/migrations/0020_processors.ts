import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/** Processor plumbing: injected faults (sandbox simulator), call intents, and the simulated processors' own records. */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE processor_faults (
      organization_id text NOT NULL,
      environment text NOT NULL,
      operation text NOT NULL,
      error text NOT NULL,
      remaining integer NOT NULL CHECK (remaining >= 0),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, environment, operation)
    )`,
    `CREATE TABLE processor_operations (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      processor text NOT NULL,
      operation text NOT NULL,
      subject_id text NOT NULL,
      state text NOT NULL,
      error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`,
    `CREATE INDEX processor_operations_subject ON processor_operations (subject_id, id)`,
    `CREATE INDEX processor_operations_open ON processor_operations (created_at) WHERE state = 'started'`,
    `CREATE TABLE sim_processor_objects (
      processor text NOT NULL,
      kind text NOT NULL,
      key text NOT NULL,
      reference text NOT NULL UNIQUE,
      organization_id text NOT NULL,
      environment text NOT NULL,
      state text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (processor, kind, key)
    )`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
