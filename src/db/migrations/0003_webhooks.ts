import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    // Job leases: a claim moves run_at to the end of the lease, so a crashed worker's job simply becomes due again.
    `ALTER TABLE jobs ADD COLUMN locked_by text`,
    `CREATE TABLE webhook_endpoints (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      url text NOT NULL,
      description text,
      enabled_events jsonb NOT NULL,
      status text NOT NULL,
      secret_sealed text NOT NULL,
      previous_secret_sealed text,
      previous_secret_expires_at timestamptz,
      failing_since timestamptz,
      disabled_reason text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX webhook_endpoints_scope ON webhook_endpoints (organization_id, environment, id DESC)`,
    // One row per (event, endpoint): the delivery's state across every attempt and replay.
    `CREATE TABLE webhook_deliveries (
      event_id text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      endpoint_id text NOT NULL,
      organization_id text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      attempts integer NOT NULL DEFAULT 0,
      failures integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      first_failed_at timestamptz,
      last_attempt_at timestamptz,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (event_id, endpoint_id)
    )`,
    `CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, event_id DESC)`,
    `CREATE TABLE webhook_delivery_attempts (
      id text PRIMARY KEY,
      event_id text NOT NULL REFERENCES events(id) ON DELETE CASCADE,
      endpoint_id text NOT NULL,
      organization_id text NOT NULL,
      environment text NOT NULL,
      event_type text NOT NULL,
      attempt integer NOT NULL,
      url text NOT NULL,
      succeeded boolean NOT NULL,
      status_code integer,
      duration_ms integer NOT NULL,
      error text,
      response_body text,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX webhook_attempts_event ON webhook_delivery_attempts (event_id, id DESC)`,
    `CREATE INDEX webhook_attempts_endpoint ON webhook_delivery_attempts (endpoint_id, id DESC)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
