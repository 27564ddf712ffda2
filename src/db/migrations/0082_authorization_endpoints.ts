import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * Authorization decided by the integrator: one `authorization_endpoints` row per organization and environment
 * (its signing secret sealed like a webhook endpoint's), the log of every call made to it
 * (`authorization_endpoint_attempts`, newest first per scope, purged after 30 days), and each authorization's
 * `decision` record (who decided, how long the integrator took, why the stand-in answered). Rows written before
 * the integrator existed were decided by the service alone, which is what the column's default says.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE authorization_endpoints (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      url text NOT NULL,
      timeout_ms integer NOT NULL CHECK (timeout_ms BETWEEN 100 AND 2000),
      stand_in text NOT NULL CHECK (stand_in IN ('approve', 'decline')),
      secret_sealed text NOT NULL,
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      UNIQUE (organization_id, environment)
    )`,
    `CREATE TABLE authorization_endpoint_attempts (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      authorization_id text NOT NULL,
      request_type text NOT NULL,
      request_id text,
      url text NOT NULL,
      response_status integer,
      latency_ms integer NOT NULL,
      outcome text NOT NULL,
      approved_amount bigint,
      stand_in_reason text,
      error text,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX authorization_endpoint_attempts_scope ON authorization_endpoint_attempts (organization_id, environment, id DESC)`,
    `ALTER TABLE authorizations ADD COLUMN decision jsonb NOT NULL DEFAULT '{"source":"svc","latency_ms":0}'::jsonb`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
