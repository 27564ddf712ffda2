import type { Db } from '../../db/types.js'
import * as repo from './repo.js'

/** True while every document of the attestation is still held: identity evidence without its files no longer counts. */
export async function attestationDocumentsHeld(db: Db, attestationId: string): Promise<boolean> {
  return (await repo.countMissingDocuments(db, attestationId)) === 0
}
