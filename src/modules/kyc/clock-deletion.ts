import { sql } from 'kysely'
import type { AppDeps } from '../../app-deps.js'
import { deleteInBatches } from '../clocks/index.js'

/**
 * A deleted sandbox clock's part here (docs/sandbox-clocks.md, "Deleting"): the KYC attestations of its
 * cardholders, with their documents (the encrypted files are rows of kyc_documents: they go with them).
 */
export async function deleteKycOf(deps: AppDeps, cardholderIds: readonly string[]) {
  if (cardholderIds.length === 0) return 0
  const holders = [...cardholderIds]
  const documents = await deleteInBatches(
    deps.db,
    'kyc_documents',
    sql`attestation_id IN (SELECT id FROM kyc_attestations WHERE cardholder_id = ANY(${holders}))`,
    'id',
  )
  const attestations = await deleteInBatches(
    deps.db,
    'kyc_attestations',
    sql`cardholder_id = ANY(${holders})`,
    'id',
  )
  return documents + attestations
}
