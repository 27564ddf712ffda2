import type { Kysely } from 'kysely'
import { runStatements } from '../migrate.js'

export async function up(db: Kysely<any>): Promise<void> {
  await runStatements(db, [
    `CREATE TABLE cardholders (
      id text PRIMARY KEY,
      organization_id text NOT NULL REFERENCES organizations(id),
      environment text NOT NULL,
      type text NOT NULL,
      first_name text NOT NULL,
      last_name text NOT NULL,
      email text NOT NULL,
      phone_number text,
      reference text,
      address jsonb,
      identity_document_sealed text,
      metadata jsonb NOT NULL DEFAULT '{}'::jsonb,
      kyc_status text NOT NULL,
      kyc_attestation_id text,
      kyc_expires_at timestamptz,
      kyc_has_identity boolean NOT NULL DEFAULT false,
      kyc_expiry_notified boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`,
    // The database decides uniqueness, so two concurrent creates cannot both win.
    `CREATE UNIQUE INDEX cardholders_email_key ON cardholders (organization_id, environment, lower(email))`,
    `CREATE UNIQUE INDEX cardholders_phone_key ON cardholders (organization_id, environment, phone_number) WHERE phone_number IS NOT NULL`,
    `CREATE INDEX cardholders_scope ON cardholders (organization_id, environment, id)`,
    `CREATE INDEX cardholders_reference ON cardholders (organization_id, environment, reference, id) WHERE reference IS NOT NULL`,
    `CREATE TABLE kyc_attestations (
      id text PRIMARY KEY,
      cardholder_id text NOT NULL REFERENCES cardholders(id),
      organization_id text NOT NULL,
      environment text NOT NULL,
      status text NOT NULL,
      provider text NOT NULL,
      provider_reference text,
      method text,
      verified_at timestamptz NOT NULL,
      expires_at timestamptz,
      reference text,
      identity_sealed text,
      address jsonb,
      created_at timestamptz NOT NULL
    )`,
    `CREATE INDEX kyc_attestations_cardholder ON kyc_attestations (cardholder_id, id)`,
    `CREATE TABLE kyc_documents (
      id text PRIMARY KEY,
      attestation_id text NOT NULL REFERENCES kyc_attestations(id),
      position integer NOT NULL,
      kind text NOT NULL,
      file_name text NOT NULL,
      content_type text NOT NULL,
      size_bytes bigint NOT NULL,
      sha256 text NOT NULL,
      wrapped_key bytea,
      ciphertext bytea,
      created_at timestamptz NOT NULL
    )`,
    // Ciphertext does not compress: store it out of line without trying.
    `ALTER TABLE kyc_documents ALTER COLUMN ciphertext SET STORAGE EXTERNAL`,
    `CREATE UNIQUE INDEX kyc_documents_attestation ON kyc_documents (attestation_id, position)`,
  ])
}

export async function down(): Promise<void> {
  throw new Error('migrations are forward-only')
}
