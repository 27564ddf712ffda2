import { sql, type Insertable, type Selectable } from 'kysely'
import type { Db } from '../../db/types.js'
import { applyBounds, type PageBounds } from '../../http/pagination.js'
import type { KycAttestationsTable, KycDocumentsTable } from './types.js'
import './types.js'

export type AttestationRow = Selectable<KycAttestationsTable>
export type DocumentMetadataRow = Pick<
  Selectable<KycDocumentsTable>,
  | 'id'
  | 'attestation_id'
  | 'position'
  | 'kind'
  | 'file_name'
  | 'content_type'
  | 'size_bytes'
  | 'sha256'
>

export async function insertAttestation(
  db: Db,
  row: Insertable<KycAttestationsTable>,
): Promise<AttestationRow> {
  return db.insertInto('kyc_attestations').values(row).returningAll().executeTakeFirstOrThrow()
}

/**
 * Inserts one document; returns nothing so the ciphertext is not read back into memory. PostgreSQL takes
 * the ciphertext as a binary parameter; PGlite (`asText`) serializes a bytea parameter byte by byte (about
 * a second per MiB), so there it travels as base64 text the database decodes, which goes through in one copy.
 */
export async function insertDocument(
  db: Db,
  row: Omit<Insertable<KycDocumentsTable>, 'ciphertext'> & { ciphertext: Buffer },
  asText: boolean,
): Promise<void> {
  const { ciphertext, ...rest } = row
  const value = asText
    ? sql<Buffer>`decode(${ciphertext.toString('base64')}, 'base64')`
    : ciphertext
  await db
    .insertInto('kyc_documents')
    .values({ ...rest, ciphertext: value })
    .execute()
}

/** Newest first: the first row is the current attestation. */
export async function listAttestations(
  db: Db,
  cardholderId: string,
  bounds: PageBounds,
): Promise<AttestationRow[]> {
  const q = db.selectFrom('kyc_attestations').selectAll().where('cardholder_id', '=', cardholderId)
  return applyBounds(q, bounds, 'id', 'desc').execute()
}

/** Metadata of the documents of some attestations, never their content. */
export async function documentMetadata(
  db: Db,
  attestationIds: string[],
): Promise<DocumentMetadataRow[]> {
  if (attestationIds.length === 0) return []
  return db
    .selectFrom('kyc_documents')
    .select([
      'id',
      'attestation_id',
      'position',
      'kind',
      'file_name',
      'content_type',
      'size_bytes',
      'sha256',
    ])
    .where('attestation_id', 'in', attestationIds)
    .orderBy('attestation_id')
    .orderBy('position')
    .execute()
}

/** How many of an attestation's documents are no longer held (their ciphertext was removed). */
export async function countMissingDocuments(db: Db, attestationId: string): Promise<number> {
  const row = await db
    .selectFrom('kyc_documents')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('attestation_id', '=', attestationId)
    .where('ciphertext', 'is', null)
    .executeTakeFirst()
  return Number(row?.n ?? 0)
}
