import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

/**
 * eSIM sales: the platform catalogue (packages and add-ons), the stock of blank profiles, orders,
 * provisioned eSIMs with the packages running on them, H5 links, and the sandbox network simulator's state.
 * The order reference is unique per (organization, environment) across package orders and top-ups.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE esim_packages (
      id text PRIMARY KEY,
      name text NOT NULL,
      data_mb integer CHECK (data_mb IS NULL OR data_mb > 0),
      validity_days integer NOT NULL CHECK (validity_days > 0),
      countries jsonb NOT NULL,
      region text NOT NULL,
      price bigint NOT NULL CHECK (price >= 0),
      currency text NOT NULL,
      status text NOT NULL DEFAULT 'on_sale',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX esim_packages_countries ON esim_packages USING gin (countries)`,
    `CREATE TABLE esim_top_ups (
      id text PRIMARY KEY,
      package_id text NOT NULL REFERENCES esim_packages(id),
      name text NOT NULL,
      data_mb integer CHECK (data_mb IS NULL OR data_mb > 0),
      validity_days integer NOT NULL CHECK (validity_days >= 0),
      price bigint NOT NULL CHECK (price >= 0),
      currency text NOT NULL,
      status text NOT NULL DEFAULT 'on_sale',
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX esim_top_ups_package ON esim_top_ups (package_id, id)`,
    `CREATE TABLE esim_status_overrides (
      organization_id text NOT NULL,
      environment text NOT NULL,
      item_id text NOT NULL,
      status text NOT NULL,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, environment, item_id)
    )`,
    `CREATE TABLE esim_profiles (
      iccid text PRIMARY KEY,
      smdp_address text NOT NULL,
      matching_id text NOT NULL,
      state text NOT NULL DEFAULT 'available',
      order_id text,
      loaded_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE UNIQUE INDEX esim_profiles_matching ON esim_profiles (smdp_address, matching_id)`,
    `CREATE INDEX esim_profiles_available ON esim_profiles (iccid) WHERE state = 'available'`,
    `CREATE TABLE esim_orders (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      type text NOT NULL,
      status text NOT NULL,
      package_id text NOT NULL REFERENCES esim_packages(id),
      top_up_id text REFERENCES esim_top_ups(id),
      esim_id text,
      iccid text,
      cardholder_id text,
      account_id text,
      price bigint NOT NULL,
      currency text NOT NULL,
      reference text NOT NULL,
      metadata jsonb NOT NULL DEFAULT '{}',
      failure_reason text,
      ledger_entry_id text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL,
      settled_at timestamptz,
      CONSTRAINT esim_orders_reference UNIQUE (organization_id, environment, reference)
    )`,
    `CREATE INDEX esim_orders_scope ON esim_orders (organization_id, environment, id DESC)`,
    `CREATE INDEX esim_orders_open ON esim_orders (created_at) WHERE status IN ('pending', 'unsettled')`,
    `CREATE INDEX esim_orders_cardholder ON esim_orders (organization_id, environment, cardholder_id, id DESC) WHERE cardholder_id IS NOT NULL`,
    `CREATE TABLE esims (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      iccid text NOT NULL UNIQUE,
      smdp_address text NOT NULL,
      matching_id text NOT NULL,
      cardholder_id text,
      order_id text NOT NULL,
      status text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX esims_scope ON esims (organization_id, environment, id DESC)`,
    `CREATE INDEX esims_cardholder ON esims (organization_id, environment, cardholder_id, id DESC) WHERE cardholder_id IS NOT NULL`,
    `CREATE TABLE esim_bundles (
      order_id text PRIMARY KEY,
      esim_id text NOT NULL REFERENCES esims(id),
      package_id text NOT NULL REFERENCES esim_packages(id),
      status text NOT NULL,
      data_mb integer,
      data_used_mb integer NOT NULL DEFAULT 0,
      activated_at timestamptz,
      expires_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    `CREATE INDEX esim_bundles_esim ON esim_bundles (esim_id, created_at)`,
    `CREATE TABLE esim_h5_links (
      id text PRIMARY KEY,
      organization_id text NOT NULL,
      environment text NOT NULL,
      cardholder_id text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      allow_purchases boolean NOT NULL,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL
    )`,
    `CREATE TABLE esim_sim_directives (
      organization_id text NOT NULL,
      environment text NOT NULL,
      next_outcome text,
      settles_as text,
      latency_ms integer,
      updated_at timestamptz NOT NULL,
      PRIMARY KEY (organization_id, environment)
    )`,
    `CREATE TABLE esim_sim_network_log (
      order_id text PRIMARY KEY,
      iccid text NOT NULL,
      outcome text NOT NULL,
      created_at timestamptz NOT NULL
    )`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
