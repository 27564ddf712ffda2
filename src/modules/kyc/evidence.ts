import type { Db } from '../../db/types.js'
import type { Scope } from '../../http/context.js'
import { ApiError } from '../../http/errors.js'
import { effectiveKycStatus, requireCardholder, type CardholderRow } from '../cardholders/index.js'
import * as repo from './repo.js'

/** True while every document of the attestation is still held: identity evidence without its files no longer counts. */
export async function attestationDocumentsHeld(db: Db, attestationId: string): Promise<boolean> {
  return (await repo.countMissingDocuments(db, attestationId)) === 0
}

/**
 * The KYC gate of account opening and card issuance on a program: `kyc_not_approved` unless the effective
 * status is approved; for programs whose processor runs its own identity checks, `kyc_identity_required`
 * unless the current attestation carries `identity` and its documents are still held.
 * Reads through `db` (the pool before a transaction, or the transaction itself) as of `now`.
 */
export async function assertKycForProgram(
  db: Db,
  scope: Scope,
  now: Date,
  cardholderId: string,
  program: { identity_evidence_required: boolean },
  param = 'cardholder_id',
): Promise<CardholderRow> {
  const row = await requireCardholder(db, scope, cardholderId, param)
  const refusal = await kycRefusal(db, row, now, program, param)
  if (refusal) throw refusal
  return row
}

/**
 * The same gate for a cardholder already read (card issuance reads it once for all its rules): the refusal, or
 * null when the cardholder passes. Reads only the attestation's documents, and only when the program needs them.
 */
export async function kycRefusal(
  db: Db,
  row: CardholderRow,
  now: Date,
  program: { identity_evidence_required: boolean },
  param = 'cardholder_id',
): Promise<ApiError | null> {
  const status = effectiveKycStatus(row, now)
  if (status !== 'approved') {
    const message = `The cardholder's kyc_status is ${status}; report an approved KYC attestation first.`
    return new ApiError('kyc_not_approved', { param, message })
  }
  if (program.identity_evidence_required) {
    if (
      !row.kyc_has_identity ||
      !row.kyc_attestation_id ||
      !(await attestationDocumentsHeld(db, row.kyc_attestation_id))
    ) {
      return new ApiError('kyc_identity_required', { param })
    }
  }
  return null
}
